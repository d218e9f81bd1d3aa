"""Behaviour check of a refactor: every offline ``pr`` suite gives the same ``results.jsonl`` on two commits.

    python benchmarks/pr_parity.py OLD NEW [--only NAME,...] [--keep DIR] [--from-old DIR]

Each commit is checked out with ``git worktree add --detach`` into a temporary folder (removed after) and every
suite in SUITES runs there, one at a time, as ``python -m assay eval ...`` with that worktree's ``src`` first on
PYTHONPATH, ASSAY_NO_LOCK=1, no other ASSAY_* variable and a fresh ASSAY_HOME per suite (no cache crosses
sides; only the pr code-search repository, assembled from pinned sdists and checked against its pinned commits,
is shared through CACHE). Records are compared by (case_id, iteration): everything but the attempt's timing
fields and the keys in VOLATILE (what differs between two runs of one commit), pytest's durations masked in
TIMED_TEXT, the worktree, run and ASSAY_HOME folders replaced by placeholders. A field null on one side and
absent on the other (a field added with a null default) is named but not a difference. Exit codes must match
too (a pr suite may fail on purpose).
``--keep DIR`` saves the outputs (DIR/old, DIR/new); ``--from-old DIR`` reads a saved side instead of running
OLD. Prints one line per suite and a summary; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: the pr-tier jobs of eval/ci_tiers.json at 013ff02, plus retrieval-code (its job runs ``--suite pr`` in the
#: full tier: too slow for every pull request; last here, it takes minutes). benchmark and sessions have no offline
#: suite, tasks no pr one.
SUITES: dict[str, list[str]] = {
    "memory": ["memory", "--suite", "pr", "--iterations", "3"],
    "retrieval-rag": ["retrieval", "--component", "rag", "--suite", "pr", "--iterations", "3"],
    "agent": ["agent", "--suite", "pr", "--iterations", "3"],
    "code": ["code", "--suite", "pr"],
    "retrieval-code": ["retrieval", "--component", "code", "--suite", "pr", "--iterations", "3"],
}
#: attempt fields that are timing or provenance of the run
DROPPED = ("started_at", "elapsed_s", "commit")
#: per suite, the dotted paths (``[*]``: any list index) that differ between two runs of one commit (013ff02 run
#: twice): timings, dropped; and texts holding pytest's "N passed in 0.07s", compared with the duration masked
VOLATILE: dict[str, tuple[str, ...]] = {
    "memory": ("details.upkeep_ms_p50",),
    "agent": (
        "details.turns[*].messages[*].tool_calls[*].started_s",
        "details.turns[*].messages[*].tool_calls[*].ended_s",
    ),
    "retrieval-code": (
        "details.fresh_s",
        "details.index.update_s",
        "details.search_ms",
        "details.steps[*].update_s",
    ),
}
TIMED_TEXT: dict[str, tuple[str, ...]] = {
    "agent": ("details.turns[*].messages[*].tool_calls[*].result_summary", "details.checks[*].detail"),
    "code": ("details.reason", "details.tests_after", "details.verified"),
}
PYTEST_DURATION = re.compile(r"\bin \d+(\.\d+)?s\b")
#: the pr code-search repository (``$ASSAY_HOME/repos``), shared by every run
CACHE = Path.home() / ".cache" / "assay-pr-parity" / "repos"
SHOWN = 4  # problems printed per suite


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout


def run_side(commit: str, out: Path, names: list[str], scratch: Path) -> dict[str, Any]:
    """Run the suites ``names`` at ``commit`` into ``out/<name>``; write and return ``out/side.json``."""
    sha = _git("rev-parse", "--verify", f"{commit}^{{commit}}").strip()
    tree, homes = scratch / f"tree-{out.name}", scratch / f"home-{out.name}"
    _git("worktree", "add", "--quiet", "--detach", str(tree), sha)
    side: dict[str, Any] = {"commit": sha, "tree": str(tree), "homes": str(homes), "suites": {}}
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env |= {
        "ASSAY_NO_LOCK": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tree / "src"), env.get("PYTHONPATH")])),
    }
    out.mkdir(parents=True, exist_ok=True)
    try:
        for name in names:
            home, run_dir = homes / name, out / name
            shutil.rmtree(run_dir, ignore_errors=True)
            CACHE.mkdir(parents=True, exist_ok=True)
            home.mkdir(parents=True)
            (home / "repos").symlink_to(CACHE)
            cmd = [sys.executable, "-m", "assay", "eval", *SUITES[name], "--out", str(run_dir)]
            t0 = time.monotonic()
            with open(out / f"{name}.log", "w") as log:
                rc = subprocess.run(
                    cmd, cwd=tree, env=env | {"ASSAY_HOME": str(home)}, stdout=log, stderr=log
                ).returncode
            wall = round(time.monotonic() - t0, 1)
            side["suites"][name] = {"args": SUITES[name], "rc": rc, "wall_s": wall, "out": str(run_dir)}
            print(f"  {sha[:9]} {name}: exit {rc} in {wall:.0f} s", flush=True)
            (out / "side.json").write_text(json.dumps(side, indent=1))
    finally:
        _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(homes, ignore_errors=True)
    return side


def _flatten(value: Any, path: str, into: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), into)
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", into)
    else:
        into[path] = value


def _general(path: str) -> str:
    return re.sub(r"\[\d+\]", "[*]", path)


def _named(path: str, keys: tuple[str, ...]) -> bool:
    general = _general(path)
    return any(general == k or general.startswith((f"{k}.", f"{k}[")) for k in keys)


def _kept(name: str, path: str, value: Any) -> Any:
    if isinstance(value, str) and _named(path, TIMED_TEXT.get(name, ())):
        return PYTEST_DURATION.sub("in <t>s", value)
    return value


def load(side: dict[str, Any], name: str) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The records of one suite by (case_id, iteration), flattened, with timings, volatile keys and paths gone."""
    info = side["suites"][name]
    places = [(info["out"], "<run>"), (f"{side['homes']}/{name}", "<home>"), (side["tree"], "<tree>")]
    records: dict[tuple[str, int], list[dict[str, Any]]] = {}
    results = Path(info["out"]) / "results.jsonl"
    for line in results.read_text().splitlines() if results.exists() else []:
        if not line.strip():
            continue
        text = line
        for place, mark in places:
            text = text.replace(json.dumps(place)[1:-1], mark)
        record = json.loads(text)
        for key in DROPPED:
            record.pop(key, None)
        flat: dict[str, Any] = {}
        _flatten(record, "", flat)
        kept = {p: _kept(name, p, v) for p, v in flat.items() if not _named(p, VOLATILE.get(name, ()))}
        records.setdefault((record["case_id"], record.get("iteration", 0)), []).append(kept)
    return records


def _first_difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    for path in sorted(a.keys() | b.keys()):
        if a.get(path, "<absent>") != b.get(path, "<absent>"):
            return f"{path}: {a.get(path, '<absent>')!r:.80} != {b.get(path, '<absent>')!r:.80}"
    return "record order"


def compare(old: dict[str, Any], new: dict[str, Any], name: str) -> tuple[list[str], set[str]]:
    """What differs in suite ``name`` between the two sides (empty when they agree), and the fields null on one
    side and absent on the other (the same record to the model: a field added with a null default)."""
    problems, nulls = [], set()
    rc_old, rc_new = old["suites"][name]["rc"], new["suites"][name]["rc"]
    if rc_old != rc_new:
        problems.append(f"exit code {rc_old} != {rc_new}")
    a, b = load(old, name), load(new, name)
    if not a and not b:
        problems.append("no results.jsonl on either side")
    for key in sorted(a.keys() | b.keys()):
        case = f"{key[0]}#{key[1]}"
        if key not in a or key not in b:
            problems.append(f"{case} only in {'new' if key not in a else 'old'}")
        elif len(a[key]) != len(b[key]):
            problems.append(f"{case} {len(a[key])} != {len(b[key])} lines")
        for x, y in zip(a.get(key, []), b.get(key, []), strict=False):
            lone = {p for p in x.keys() ^ y.keys() if x.get(p, y.get(p)) is None}
            nulls |= {f"{_general(p)} (only in {'new' if p in y else 'old'})" for p in lone}
            x, y = ({p: v for p, v in d.items() if p not in lone} for d in (x, y))
            if x != y:
                problems.append(f"{case} {_first_difference(x, y)}")
                break
    return problems, nulls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--only", default="", help=f"comma-separated suites of {', '.join(SUITES)}")
    parser.add_argument("--keep", type=Path, help="save the outputs in DIR/old and DIR/new")
    parser.add_argument(
        "--from-old", type=Path, help="a saved old side (a --keep DIR/old) instead of running OLD"
    )
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(SUITES)
    if unknown := set(names) - set(SUITES):
        parser.error(f"unknown suites {sorted(unknown)}; known: {', '.join(SUITES)}")
    with tempfile.TemporaryDirectory(prefix="pr-parity-") as tmp:
        scratch = Path(tmp)
        if args.from_old:
            old = json.loads((args.from_old / "side.json").read_text())
            want = _git("rev-parse", "--verify", f"{args.old}^{{commit}}").strip()
            if old["commit"] != want or set(names) - set(old["suites"]):
                parser.error(f"{args.from_old} holds {old['commit'][:9]} with {', '.join(old['suites'])}")
        else:
            old = run_side(args.old, (args.keep or scratch) / "old", names, scratch)
        new = run_side(args.new, (args.keep or scratch) / "new", names, scratch)
        differing = 0
        for name in names:
            problems, nulls = compare(old, new, name)
            differing += bool(problems)
            walls = f"{old['suites'][name]['wall_s']:.0f} s / {new['suites'][name]['wall_s']:.0f} s"
            verdict = f"DIFFERENT ({len(problems)} problems)" if problems else "same"
            print(
                f"{name} ({walls}): {verdict}"
                + (f"; null fields {', '.join(sorted(nulls))}" if nulls else "")
            )
            print("".join(f"    {line}\n" for line in problems[:SHOWN]), end="")
    print(
        f"{old['commit'][:9]} -> {new['commit'][:9]}: {len(names) - differing} of {len(names)} suites the same"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
