"""What the installed llama.cpp was built with, and whether it can run on this CPU.

assay serves the embedded model with llama.cpp from the ``xllamacpp`` wheel, prebuilt portable (x86-64: AVX2,
FMA and F16C; no AVX-512, no AMX). A llama.cpp built with ``-march=native`` on a CPU that has AMX routes
quantised matrix products through ``ggml_backend_amx_mul_mat``, which crashes (SIGSEGV) under ``llama_decode``;
one compiled for instructions this CPU lacks dies with SIGILL. :func:`check_llama_build` refuses either before
the model starts (a source build of xllamacpp, made on another machine or with other flags, can be either),
naming the command that puts the portable wheel back, instead of letting it crash.
"""

from __future__ import annotations

import functools
import importlib.util
import mmap
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, MissingDependencyError

__all__ = [
    "REINSTALL_COMMAND",
    "XLLAMACPP_VERSION",
    "LlamaBuild",
    "check_llama_build",
    "cpu_flags",
    "llama_build",
]

#: the llama.cpp binding the ``local`` extra pins (pyproject.toml says the same; a test holds them together)
XLLAMACPP_VERSION = "2026.10.11549"
#: the command that puts the prebuilt portable wheel back (a source build pip cached would be reused without
#: ``--only-binary``)
REINSTALL_COMMAND = (
    f"pip install --force-reinstall --no-deps --only-binary xllamacpp 'xllamacpp=={XLLAMACPP_VERSION}'"
)
#: the command that builds llama.cpp for this machine (a CPU without AVX2 cannot run the prebuilt wheel)
NATIVE_BUILD_COMMAND = (
    f"pip install --force-reinstall --no-deps --no-binary xllamacpp 'xllamacpp=={XLLAMACPP_VERSION}'"
)
#: symbols only a build with the AMX kernels contains
AMX_SYMBOLS = (b"ggml_backend_amx_mul_mat", b"ggml_backend_amx_buffer_type")
#: instruction sets the portable build needs (x86-64-v3); checked so a missing one is an error, not SIGILL
PORTABLE_X86_FLAGS = ("avx", "avx2", "fma", "f16c")


@dataclass(frozen=True)
class LlamaBuild:
    """The CPU features compiled into the installed llama.cpp, as it reports them, and its library files."""

    features: dict[str, str]
    libraries: tuple[Path, ...]
    amx_symbols: tuple[str, ...]

    @property
    def has_amx(self) -> bool:
        return any(k.startswith("AMX") and v == "1" for k, v in self.features.items()) or bool(
            self.amx_symbols
        )

    @property
    def compiled_isa(self) -> tuple[str, ...]:
        """x86 instruction sets the build was compiled for (lower-case, as /proc/cpuinfo names them)."""
        names = {"AVX": "avx", "AVX2": "avx2", "FMA": "fma", "F16C": "f16c", "AVX512": "avx512f"}
        return tuple(flag for key, flag in names.items() if self.features.get(key) == "1")


def _parse_system_info(text: str) -> dict[str, str]:
    """``CPU : SSE3 = 1 | AVX = 1 | ...`` -> {"SSE3": "1", "AVX": "1", ...}."""
    features: dict[str, str] = {}
    for part in text.replace("\n", "|").split("|"):
        if "=" not in part:
            continue
        key, _, value = part.rpartition("=")
        key = key.split(":")[-1].strip()
        if key:
            features[key] = value.strip()
    return features


def _package_dir() -> Path:
    spec = importlib.util.find_spec("xllamacpp")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("xllamacpp", "local")
    return Path(next(iter(spec.submodule_search_locations)))


def _amx_symbols(libraries: tuple[Path, ...]) -> tuple[str, ...]:
    found: set[str] = set()
    for lib in libraries:
        with lib.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found.update(sym.decode() for sym in AMX_SYMBOLS if data.find(sym) != -1)
    return tuple(sorted(found))


@functools.cache
def llama_build() -> LlamaBuild:
    """Inspect the installed llama.cpp (imports ``xllamacpp``; cached for the process): the CPU features it
    reports and the AMX symbols in its shared libraries."""
    try:
        import xllamacpp
    except ImportError as exc:
        raise MissingDependencyError("xllamacpp", "local") from exc
    text = str(xllamacpp.get_system_info())
    folder = _package_dir()
    libraries = tuple(sorted({p.resolve() for pattern in ("*.so", "*.so.*", "*.dylib", "*.dll")
                              for p in folder.rglob(pattern)}))  # fmt: skip
    return LlamaBuild(
        features=_parse_system_info(text), libraries=libraries, amx_symbols=_amx_symbols(libraries)
    )


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU flags of this machine (``/proc/cpuinfo``); empty where that file does not exist."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def check_llama_build(build: LlamaBuild | None = None, flags: frozenset[str] | None = None) -> None:
    """Raise :class:`ConfigError` when the installed llama.cpp cannot run on this CPU.

    Refused: a build with the AMX kernels on a CPU that has AMX (it crashes), and a build compiled for an
    instruction set this CPU lacks (it would die with SIGILL).
    """
    build = build or llama_build()
    flags = cpu_flags() if flags is None else flags
    if not flags:  # not Linux/x86: nothing to check against
        return
    if build.has_amx and any(f.startswith("amx") for f in flags):
        where = ", ".join(build.amx_symbols) or "AMX_INT8 = 1"
        raise ConfigError(
            f"the installed llama.cpp (xllamacpp) was built with AMX kernels ({where}), which crash on this "
            f"CPU; put the portable wheel back: {REINSTALL_COMMAND}"
        )
    if "avx" in flags or "sse2" in flags:  # an x86 CPU
        missing = [isa for isa in build.compiled_isa if isa not in flags]
        if missing:
            raise ConfigError(
                f"the installed llama.cpp (xllamacpp) was compiled for {', '.join(missing)}, which this CPU "
                f"lacks; build it for this machine (it has no AMX, so a native build is safe): {NATIVE_BUILD_COMMAND}"
            )
