"""Mutation check of the new tests/test_units.py: it passes on toybox/units.py and fails on every planted bug."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _probe import fail, ok  # noqa: E402

MUTANTS = [
    ('"h": 3600', '"h": 360', "hours are 360 s"),
    ('"m": 60,', '"m": 6,', "minutes are 6 s"),
    ('"K": 1024', '"K": 1000', "K is 1000"),
    ("if not text or _DURATION.sub", "if not text and _DURATION.sub", "garbage durations accepted"),
    ('or "0s"', 'or ""', "zero formats as empty"),
    ("if seconds < 0:", "if seconds < -1:", "negative durations accepted"),
    ("return int(float(match.group(1))", "return round(float(match.group(1))", "sizes rounded, not floored"),
    (
        '((hours, "h"), (minutes, "m"), (secs, "s"))',
        '((minutes, "m"), (hours, "h"), (secs, "s"))',
        "minutes before hours",
    ),
]


def run_tests(root):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests/test_units.py"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(root), "PATH": ""},
    )
    return proc.returncode, (proc.stdout + proc.stderr).strip().splitlines()[-1:]


if not Path("tests/test_units.py").is_file():
    fail("tests/test_units.py does not exist")
code, tail = run_tests(Path.cwd())
if code != 0:
    fail(f"tests/test_units.py does not pass on toybox/units.py: {tail}")
source = Path("toybox/units.py").read_text()
survived = []
for old, new, what in MUTANTS:
    if old not in source:
        fail(f"toybox/units.py was changed (cannot plant: {what})")
    root = Path(tempfile.mkdtemp()) / "p"
    shutil.copytree(Path.cwd(), root)
    (root / "toybox" / "units.py").write_text(source.replace(old, new, 1))
    code, _ = run_tests(root)
    if code == 0:
        survived.append(what)
if survived:
    fail(f"{len(survived)} of {len(MUTANTS)} planted bugs survive the tests: {', '.join(survived)}")
ok(f"the tests catch all {len(MUTANTS)} planted bugs")
