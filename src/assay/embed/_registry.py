"""Embedders selected by a spec string, as on the command line (``--embedder``).

hash                    HashEmbedder, 384-d          (deterministic, no model; pr suites)
hash:DIM                HashEmbedder of DIM dimensions
local                   all-MiniLM-L6-v2 int8 ONNX on onnxruntime (the default; extra 'embed')
local:PATH              the same pipeline on another ONNX export (e.g. fp32) of the same model
openai-compat/NAME@URL  /v1/embeddings of any OpenAI-compatible server, URL = base ending in /v1
"""

from __future__ import annotations

from typing import Any

from assay.embed._hash import HashEmbedder
from assay.embed._protocol import Embedder
from assay.errors import ConfigError

__all__ = ["DEFAULT_EMBEDDER", "EMBEDDER_SPECS", "get_embedder"]

#: The embedder used when none is named.
DEFAULT_EMBEDDER = "local"

#: One line per accepted spec form, for help texts and error messages.
EMBEDDER_SPECS = (
    "hash",
    "hash:DIM",
    "local",
    "local:PATH.onnx",
    "openai-compat/NAME@URL",
)


def _bad(spec: str, why: str) -> ConfigError:
    return ConfigError(f"bad embedder spec {spec!r}: {why} (expected one of: {', '.join(EMBEDDER_SPECS)})")


def _construct(cls: Any, spec: str, *args: Any, **options: Any) -> Any:
    try:
        return cls(*args, **options)
    except TypeError as exc:
        raise _bad(spec, f"option not accepted by {cls.__name__}: {exc}") from exc


def get_embedder(spec: str | None = None, *, cache: bool = False, **options: Any) -> Embedder:
    """Build the embedder ``spec`` names (default :data:`DEFAULT_EMBEDDER`).

    ``options`` go to the embedder's constructor (``threads``, ``batch_size``, ``api_key``...). With
    ``cache=True`` the embedder is wrapped in a :class:`~assay.embed.CachedEmbedder` (memory LRU + disk).
    """
    spec = (spec or DEFAULT_EMBEDDER).strip()
    embedder: Embedder
    if spec == "hash" or spec.startswith("hash:"):
        dim_text = spec.partition(":")[2]
        if dim_text:
            try:
                dim = int(dim_text)
            except ValueError:
                raise _bad(spec, f"dimension {dim_text!r} is not a whole number") from None
            if not 8 <= dim <= 65536:
                raise _bad(spec, f"dimension must be between 8 and 65536, got {dim}")
            options.setdefault("dim", dim)
        embedder = _construct(HashEmbedder, spec, **options)
    elif spec == "local" or spec.startswith("local:"):
        from assay.embed._local import LocalEmbedder

        path = spec.partition(":")[2] or None
        embedder = _construct(LocalEmbedder, spec, path, **options)
    elif spec.startswith("openai-compat/"):
        from assay.embed._openai import OpenAICompatEmbedder

        rest = spec[len("openai-compat/") :]
        name, at, url = rest.partition("@")
        if not at or not name or not url:
            raise _bad(spec, "openai-compat needs a model name and a base URL: openai-compat/NAME@URL")
        embedder = _construct(OpenAICompatEmbedder, spec, name, url, **options)
    else:
        raise _bad(spec, "unknown embedder")
    if cache:
        from assay.embed._cache import CachedEmbedder

        embedder = CachedEmbedder(embedder)
    return embedder
