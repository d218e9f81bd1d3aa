"""`--fixer-fence`: the fixer runs under bubblewrap and sees its copy of the profile only, so a command fixer
cannot read the held-out runs (or anything else) even when it tries."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest

from assay.agents.fence import fence_available
from assay.cli import main

if TYPE_CHECKING:
    from conftest import Climb

#: tries to read the held-out baseline's journal, then writes what it found into system.md
PEEK = (
    "import sys, pathlib; p = pathlib.Path(sys.argv[1]); "
    "seen = p.read_text()[:40] if p.exists() else 'nothing'; "
    "pathlib.Path('system.md').write_text(pathlib.Path('system.md').read_text() + chr(10) + 'saw: ' + seen + chr(10)); "
    "pathlib.Path('tools/query_documents.md').write_text(sys.argv[2])"
)


@pytest.mark.skipif(fence_available(None) is not None, reason="bubblewrap cannot run here")
def test_a_fenced_fixer_sees_only_the_profile(small_climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    c = small_climb
    python = shutil.which("python3", path="/usr/bin") or "/usr/bin/python3"
    held = c.out / "baseline" / "heldout" / "results.jsonl"
    description = " ".join(c.description.split())
    fixer = f"command:{python} -c {json.dumps(PEEK)} {held} {json.dumps(description)}"
    argv = ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", fixer, "--fixer-fence", "--out", str(c.out), "--rounds", "1"]  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert held.is_file() and h["fixer_fence"] is True
    r = h["rounds"][0]
    assert "+saw: nothing" in r["diff"]  # the journal exists, but not inside the fence
    assert r["outcome"] == "kept"
