"""The README's set-up commands, CI's install and assay's own install hints say the same thing.

CI (``.ci/run``) installs exactly as the README's "Run the tests" command does; every build setting the README
gives the compiled extra (``local``: llama.cpp) is the one assay prints when that extra is missing or its build
cannot run here; and the quick start installs no extra that compiles.
"""

from __future__ import annotations

import re
from pathlib import Path

from assay.errors import BUILD_ARGS, MissingDependencyError
from assay.models._llama_build import REINSTALL_COMMAND

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


def test_the_compiled_extra_is_installed_with_the_build_settings_assay_prints() -> None:
    commands = _readme_commands()
    settings = {m for c in commands for m in re.findall(r'CMAKE_ARGS="[^"]*"', c)}
    assert settings == {BUILD_ARGS["local"]}, settings
    for command in commands:
        if "[local" in command or "[test" in command:  # the test extra brings local
            assert BUILD_ARGS["local"] in command, command
    assert REINSTALL_COMMAND.startswith(BUILD_ARGS["local"] + " pip install --no-cache-dir")
    assert str(MissingDependencyError("llama-cpp-python", "local")).endswith(
        f"{BUILD_ARGS['local']} pip install 'assay[local]'"
    )
    assert str(MissingDependencyError("faiss-cpu", "rag")).endswith(": pip install 'assay[rag]'")


def test_the_quick_start_compiles_nothing() -> None:
    quick = [c for c in _readme_commands() if "assay eval memory" in c]
    assert len(quick) == 1, quick
    extras = re.search(r"pip install -e '\.\[([^\]]*)\]'", quick[0])
    assert extras is not None, quick[0]
    assert not set(extras.group(1).split(",")) & set(BUILD_ARGS), extras.group(1)
    assert "CMAKE_ARGS" not in quick[0]
