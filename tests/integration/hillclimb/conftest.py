"""A git repo in tmp_path holding a reference-agent profile with a planted defect (tools/query_documents.md
removed, so the tool is not offered) and scenarios from the shipped pr suite whose expected tools are named by
kind (``kind:documents``), so a tool that is not offered fails its scenarios in code.

The scripted fixer is a ``command`` harness running ``fixer.py``: each round it applies the next entry of a
plan (restore the description, remove one, append a sentence to system.md) to the copy it works in.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from assay.agents.reference._profile import DEFAULT_PROFILE
from assay.agents.reference.harness import ALL_TOOLS

SHIPPED = Path(__file__).resolve().parents[3] / "eval" / "scenarios"
CATEGORIES = ("document_qa", "tool_choice")

FIXER = """
import json, pathlib, sys
plan, state = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
prompt = sys.stdin.read()
n = int(state.read_text()) if state.exists() else 0
state.write_text(str(n + 1))
for action in json.loads(plan.read_text())[n]:
    kind, _, arg = action.partition(":")
    if kind == "write":
        name, _, text = arg.partition("=")
        pathlib.Path(name).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(name).write_text(text)
    elif kind == "remove":
        pathlib.Path(arg).unlink()
    elif kind == "append":
        with open("system.md", "a") as f:
            f.write("\\n" + arg + "\\n")
    elif kind == "interrupt":  # Ctrl-C reaching the loop while the fixer works (the test sends it)
        import time
        plan.with_suffix(".interrupt").write_text("now")
        time.sleep(30)
    elif kind == "outside":
        pathlib.Path(arg).write_text("written by the fixer\\n")
print(f"round {n + 1}: applied my edit")
"""


def _ctrl_c_when(flag: Path) -> None:
    """Send this process (the loop, run in-process) SIGINT once the fixer says so: the fixer runs in its own PID
    namespace and cannot signal the eval itself, as a user's Ctrl-C at the terminal would."""

    def watch() -> None:
        for _ in range(6000):
            if flag.exists():
                flag.unlink()
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _by_kind(names: list[str]) -> list[str]:
    return [n if n.startswith("kind:") else f"kind:{ALL_TOOLS[n].kind}" for n in names]


#: quick loops: three document scenarios the scripted agent answers right once it is offered query_documents,
#: and one it answers wrong whatever the profile
SMALL = (
    "dqa-quarterly-revenue",
    "dqa-refund-window-member",
    "dqa-price-table-annual",
    "dqa-handbook-deprecation-notice",
)


#: the main loop: SMALL and two tool-choice scenarios (each expecting a tool of its own: grep, read_file)
MEDIUM = (*SMALL, "tc-grep-timeout-config", "tc-read-named-file")


def make_scenarios(dest: Path, only: tuple[str, ...] | None = None) -> None:
    shutil.copytree(SHIPPED / "_documents", dest / "_documents")
    for cat in CATEGORIES:
        (dest / cat).mkdir(parents=True)
        for f in sorted((SHIPPED / cat).glob("*.yaml")):
            if only is not None and f.stem not in only:
                continue
            data = yaml.safe_load(f.read_text())
            data["expected_tools"] = _by_kind(data.get("expected_tools") or [])
            (dest / cat / f.name).write_text(yaml.safe_dump(data, sort_keys=False))


class Climb:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        self.profile = self.repo / "profile"
        self.scenarios = self.repo / "scenarios"
        self.plan = root / "plan.json"
        self.state = root / "fixer-state"
        self.script = root / "fixer.py"
        self.out = self.repo / "results" / "climb"
        self.description = (DEFAULT_PROFILE / "tools" / "query_documents.md").read_text()

    def fixer(self, plan: list[list[str]]) -> str:
        self.plan.write_text(json.dumps(plan))
        self.script.write_text(FIXER)
        if any(a.startswith("interrupt:") for step in plan for a in step):
            _ctrl_c_when(self.plan.with_suffix(".interrupt"))
        return f"command:{sys.executable} {self.script} {self.plan} {self.state}"

    def git(self, *args: str) -> str:
        return git(self.repo, *args)

    def restore(self) -> str:
        return f"write:tools/query_documents.md={self.description}"


@pytest.fixture
def climb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Climb:
    return _climb(tmp_path, monkeypatch, None)


@pytest.fixture
def medium_climb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Climb:
    """:data:`MEDIUM`: train 4, held-out 2 (dqa-quarterly-revenue, tc-grep-timeout-config)."""
    return _climb(tmp_path, monkeypatch, MEDIUM)


@pytest.fixture
def small_climb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Climb:
    """Four document scenarios only (:data:`SMALL`: train 3, held-out 1)."""
    return _climb(tmp_path, monkeypatch, SMALL)


def _climb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, only: tuple[str, ...] | None) -> Climb:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    c = Climb(tmp_path)
    shutil.copytree(DEFAULT_PROFILE, c.profile)
    (c.profile / "tools" / "query_documents.md").unlink()  # the planted defect
    make_scenarios(c.scenarios, only)
    (c.repo / ".gitignore").write_text("results/\nnoise.json\n")  # what `assay eval noise` writes stays out
    git(c.repo, "init", "-q", "-b", "main")
    git(c.repo, "config", "user.email", "t@example.invalid")
    git(c.repo, "config", "user.name", "t")
    git(c.repo, "add", "-A")
    git(c.repo, "commit", "-q", "-m", "start")
    monkeypatch.chdir(c.repo)  # hillclimb climbs only a profile of the repository it runs from
    return c
