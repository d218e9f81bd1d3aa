"""HashEmbedder: the same vectors on every machine, pinned by exact values."""

from __future__ import annotations

import numpy as np
import pytest

from assay.embed import Embedder, HashEmbedder


def test_fixed_values_do_not_drift() -> None:
    vec = HashEmbedder(dim=16).embed(["hello world"])[0]
    a, b, c = 0.18245011568069458, 0.7037361860275269, 0.5212860703468323
    expected = [0, a, 0, a, -a, 0, -a, 0, -a, -b, 0, 0, a, -c, 0, a]
    np.testing.assert_allclose(vec, np.array(expected, dtype=np.float32), rtol=0, atol=1e-7)


def test_fixed_values_default_dim() -> None:
    vec = HashEmbedder().embed(["parseConfig reads the YAML file"])[0]
    assert int(np.count_nonzero(vec)) == 37
    assert vec[56] == pytest.approx(-0.2833247780799866, abs=1e-7)
    assert vec[2] == pytest.approx(0.09916366636753082, abs=1e-7)


def test_deterministic_across_instances_and_batches() -> None:
    texts = ["def load_index(path):", "the quick brown fox", "", "ÜnïcödÉ テキスト"]
    one = HashEmbedder().embed(texts)
    two = np.stack([HashEmbedder().embed([t])[0] for t in texts])
    np.testing.assert_array_equal(one, two)


def test_shape_dtype_and_unit_norm() -> None:
    emb = HashEmbedder(dim=128)
    out = emb.embed(["alpha beta", "gamma", "snake_case and camelCase"])
    assert out.shape == (3, 128)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    assert emb.embed([]).shape == (0, 128)


def test_text_without_tokens_is_zero_vector() -> None:
    out = HashEmbedder().embed(["", "!!! ---"])
    assert not out.any()


def test_identifier_parts_overlap() -> None:
    emb = HashEmbedder()
    a, b, c = emb.embed(["parseConfigFile", "parse_config_file", "render html page"])
    assert float(a @ b) > 0.9
    assert float(a @ c) < 0.3


def test_protocol_and_id() -> None:
    emb = HashEmbedder(dim=64)
    assert isinstance(emb, Embedder)
    assert emb.id == "hash-v1:dim=64:char=3"
    assert HashEmbedder().id != emb.id
