"""Mutation check of the new tests/test_sizes.py in the src-layout, uninstalled project: run the way the README
says (``python -m pytest`` from the root, nothing on PYTHONPATH), it passes on src/toybox/units.py, every test in
it runs (none skipped), and it fails on every bug planted in parse_size."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

UNITS = Path("src/toybox/units.py")
TESTS = "tests/test_sizes.py"
MUTANTS = [
    ('"K": 1024', '"K": 1000', "K is 1000"),
    ('"M": 1024**2', '"M": 1000**2', "M is 1000**2"),
    ('"G": 1024**3', '"G": 1024**2', "G is a megabyte"),
    ("return int(float(match.group(1))", "return round(float(match.group(1))", "sizes rounded, not floored"),
    ("match = re.fullmatch(", "match = re.match(", "trailing text accepted (1KB)"),
    ('raise ValueError(f"not a size: {text!r}")', "return 0", "bad sizes read as 0"),
]
SUMMARY = re.compile(r"\b\d+ (passed|failed|skipped|errors?|deselected)\b.* in [\d.]+s")


def run_tests(root):
    # the project's own command, as a user runs it: nothing on PYTHONPATH, the package installed nowhere, and
    # (as in the agent's toolchain) no pytest plugin but pytest's own
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TASK_FACTS")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", TESTS],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    out = (proc.stdout + proc.stderr).strip().splitlines()
    summary = [ln for ln in out if SUMMARY.search(ln)]  # pytest's summary line (warnings may follow it)
    return proc.returncode, (summary or out or ["(no output)"])[-1].strip("= ")


if not Path(TESTS).is_file():
    fail(f"{TESTS} does not exist")
if not UNITS.is_file():
    fail(f"{UNITS} is gone (the package was moved out of src/)")
code, last = run_tests(Path.cwd())
if code != 0:
    fail(f"`python -m pytest {TESTS}` from the project root does not pass: {last}")
if "skipped" in last or not re.search(r"\d+ passed", last):
    fail(f"{TESTS} passes without running every test: {last}")
source = UNITS.read_text()
survived = []
for old, new, what in MUTANTS:
    if old not in source:
        fail(f"{UNITS} was changed (cannot plant: {what})")
    root = Path(tempfile.mkdtemp()) / "p"
    shutil.copytree(Path.cwd(), root, symlinks=True)
    (root / UNITS).write_text(source.replace(old, new, 1))
    code, _ = run_tests(root)
    if code == 0:
        survived.append(what)
if survived:
    fail(f"{len(survived)} of {len(MUTANTS)} planted bugs survive {TESTS}: {', '.join(survived)}")
ok(f"{TESTS} runs from the root and catches all {len(MUTANTS)} planted bugs")
