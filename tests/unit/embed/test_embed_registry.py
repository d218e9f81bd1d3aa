"""get_embedder: spec strings to embedders, and clear errors for bad specs."""

from __future__ import annotations

import pytest

from assay.embed import (
    DEFAULT_EMBEDDER,
    CachedEmbedder,
    HashEmbedder,
    LocalEmbedder,
    OpenAICompatEmbedder,
    get_embedder,
)
from assay.errors import ConfigError


def test_default_is_local() -> None:
    assert DEFAULT_EMBEDDER == "local"


def test_hash_specs() -> None:
    e = get_embedder("hash")
    assert isinstance(e, HashEmbedder) and e.dim == 384
    e = get_embedder("hash:64")
    assert isinstance(e, HashEmbedder) and e.dim == 64


def test_local_spec() -> None:
    pytest.importorskip("onnxruntime")
    e = get_embedder("local", threads=1, batch_size=8)
    assert isinstance(e, LocalEmbedder)
    assert (e.threads, e.batch_size, e.dim, e.max_tokens) == (1, 8, 384, 256)


def test_openai_compat_spec() -> None:
    e = get_embedder("openai-compat/nomic-embed@http://127.0.0.1:9/v1/")
    assert isinstance(e, OpenAICompatEmbedder)
    assert e.model == "nomic-embed"
    assert e.url == "http://127.0.0.1:9/v1/embeddings"
    assert e.id == "openai-compat:nomic-embed@http://127.0.0.1:9/v1"


def test_cache_flag_wraps(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    e = get_embedder("hash:32", cache=True)
    assert isinstance(e, CachedEmbedder)
    assert e.id == HashEmbedder(dim=32).id
    assert e.directory is not None and str(e.directory).startswith(str(tmp_path / "cache" / "embeddings"))


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("hash:abc", "not a whole number"),
        ("hash:2", "between 8 and 65536"),
        ("minilm", "unknown embedder"),
        ("openai-compat/model-without-url", "NAME@URL"),
        ("openai-compat/@http://x/v1", "NAME@URL"),
        ("openai-compat/m@ftp://host/v1", "http"),
    ],
)
def test_bad_specs_name_the_spec(spec: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle) as err:
        get_embedder(spec)
    if needle != "http":
        assert repr(spec) in str(err.value)


def test_unknown_option_is_config_error() -> None:
    with pytest.raises(ConfigError, match="threads"):
        get_embedder("hash", threads=2)


@pytest.mark.parametrize("spec", ["hash", "local"])
def test_bad_text_types_are_rejected(spec: str) -> None:
    emb = get_embedder(spec)
    with pytest.raises(TypeError, match="not one string"):
        emb.embed("a bare string")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text 1 is int"):
        emb.embed(["fine", 3])  # type: ignore[list-item]


async def test_embed_async_runs_in_a_thread() -> None:
    from assay.embed import embed_async

    out = await embed_async(HashEmbedder(dim=16), ["a b", "c"])
    assert out.shape == (2, 16)


def test_register_embedder_adds_a_kind() -> None:
    from assay.embed import register_embedder
    from assay.embed._registry import _FACTORIES

    seen: dict[str, object] = {}

    def factory(arg: str, **options: object) -> HashEmbedder:
        seen.update(arg=arg, **options)
        return HashEmbedder(dim=int(arg))

    register_embedder("test-kind", factory)
    try:
        e = get_embedder("test-kind:24", char_ngrams=3)
        assert e.dim == 24 and seen == {"arg": "24", "char_ngrams": 3}
    finally:
        del _FACTORIES["test-kind"]
    with pytest.raises(ConfigError, match="unknown embedder 'test-kind'"):
        get_embedder("test-kind:24")
    with pytest.raises(ValueError, match="may hold only"):
        register_embedder("bad kind", factory)
