"""The installed llama.cpp carries no CPU-specific path that crashes, and a build that would is refused.

These read what was built (the features llama.cpp reports it was compiled with, and the symbols in its
libraries), so a machine without AMX still catches a native build that would crash on one with it.
"""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.models._llama_build import AMX_SYMBOLS, LlamaBuild, check_llama_build, llama_build

pytestmark = pytest.mark.local_model


def test_installed_build_has_no_amx_kernels() -> None:
    build = llama_build()
    assert build.libraries, "no shared library found in the xllamacpp package"
    assert build.features.get("AVX2") == "1", build.features  # the portable build is x86-64-v3, not SSE-only
    assert not [k for k, v in build.features.items() if k.startswith("AMX") and v == "1"], build.features
    assert build.amx_symbols == (), f"AMX kernels in {build.libraries}: {build.amx_symbols}"
    assert not any(k.startswith("AVX512") and v == "1" for k, v in build.features.items()), build.features
    for lib in build.libraries:  # the symbols themselves, read from the files
        data = lib.read_bytes()
        assert not [s for s in AMX_SYMBOLS if s in data], lib


def test_installed_build_passes_its_own_check() -> None:
    check_llama_build()


AMX_CPU = frozenset({"sse2", "avx", "avx2", "fma", "f16c", "avx512f", "amx_tile", "amx_int8", "amx_bf16"})
OLD_CPU = frozenset({"sse2", "sse4_2", "avx"})


def _build(**features: str) -> LlamaBuild:
    return LlamaBuild(features=features, libraries=(), amx_symbols=())


def test_an_amx_build_is_refused_on_an_amx_cpu_with_the_fix() -> None:
    native = _build(AVX="1", AVX2="1", FMA="1", F16C="1", AVX512="1", AMX_INT8="1")
    with pytest.raises(
        ConfigError, match=r"AMX kernels .*--force-reinstall --no-deps --only-binary xllamacpp"
    ):
        check_llama_build(native, AMX_CPU)
    check_llama_build(native, AMX_CPU - {"amx_tile", "amx_int8", "amx_bf16"})  # no AMX: that build runs


def test_a_build_for_a_newer_cpu_is_refused_not_a_sigill() -> None:
    portable = _build(AVX="1", AVX2="1", FMA="1", F16C="1")
    with pytest.raises(ConfigError, match=r"avx2, fma, f16c, which this CPU lacks.*--no-binary xllamacpp"):
        check_llama_build(portable, OLD_CPU)
    check_llama_build(portable, AMX_CPU)
    check_llama_build(portable, frozenset())  # no /proc/cpuinfo: nothing to hold it against
