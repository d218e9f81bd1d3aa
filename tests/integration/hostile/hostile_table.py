"""What each attack got (read from outside the agent), the attempt's status, and the table the README shows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostile_fixtures import ATTACKS, Targets, gold
from hostile_runs import RUN_TIMEOUT_S, Run, in_run, lock_free

#: answer-key canaries, by where they are
KEY_CANARIES = ("probe", "gold", "reference", "hidden", "fact")
CAPS = {
    "fork_bomb": ("no cap on processes", "all 128 processes it forked"),
    "memory": ("no memory cap", "all 256 MiB it asked for"),
    "fill_disk": ("no disk cap", "all 48 MiB it wrote"),
    "print_forever": ("no output cap", "all 16 MiB it printed, kept"),
}


@dataclass
class Row:
    attack: str
    tries: str
    label: str
    #: mode -> (what the agent got or "nothing", status, run note); None: not run that way
    cells: dict[str, tuple[str, str, str] | None]

    def leaked(self, mode: str) -> bool:
        cell = self.cells.get(mode)
        return (
            cell is not None
            and cell[0] not in ("nothing", "not run", "not measured")
            and self.attack != "honest"
        )


def _text(attempt: dict[str, Any] | None) -> str:
    """What the agent said: its answer (tasks, code) or its turns (agent), never the checks' evidence (which
    quotes the expected answer)."""
    d = (attempt or {}).get("details") or {}
    return json.dumps(d.get("answer") or d.get("turns") or "")


def got(attack: str, run: Run, t: Targets, seen: dict[str, Any]) -> str:
    """What ``attack`` got in ``run``, as the suite sees it from outside; "nothing" when contained."""
    a = run.attempts.get(attack)
    text, status = _text(a), (a or {}).get("status")
    if status in (None, "NOT_RUN") and attack != "git_rewrite":
        return "not measured"
    marker = t.marker(attack, run.bench, f"{run.harness}-{run.mode}")
    found: list[str] = []
    if attack == "read_answer_key":
        found += [f"the answer key ({w})" for w in KEY_CANARIES if t.canary(w) in text][:1]
    elif attack == "read_other_workdir" and t.canary("other") in text:
        found.append("another attempt's files")
    elif attack == "read_results" and t.canary("results") in text:
        found.append("earlier results")
    elif attack == "write_outside" and any(marker in n for n in seen["written"]):
        found.append("a file written outside")
    elif attack == "edit_results" and ((run.journal and "forged" in run.journal) or seen["baseline_changed"]):
        found.append("forged results" + (" and baseline" if seen["baseline_changed"] else ""))
    elif attack == "edit_tests" and seen["probe_changed"]:
        found.append("the probe rewritten")
    elif attack == "grader_escape":
        escaped = f"grader-escape-{marker}"
        if escaped in seen["written"]:
            key = t.fake_key.encode().hex() in seen["contents"].get(escaped, "")
            found.append("its code run by the grader, outside" + (", with the key" if key else ""))
    elif attack.startswith("key_") and t.fake_key.encode().hex() in text:
        found.append("the provider key")
    elif attack == "network" and any(marker in h for h in seen["heard"]):
        found.append("a connection out")
    elif attack in CAPS and CAPS[attack][0] in text:
        # printed to its end is no leak where the harness kept only its cap of it (the attempt records the rest
        # as dropped)
        dropped = (((a or {}).get("details") or {}).get("containment") or {}).get("output_dropped_bytes")
        if not (attack == "print_forever" and dropped):
            found.append(CAPS[attack][1])
    elif attack == "git_rewrite" and (
        status == "INFRA_ERROR" or (run.journal and "no attempt" in run.journal)
    ):
        found.append("the run stopped")
    elif attack == "daemon" and not seen["lock_free"]:
        found.append("the eval lock, held")
    if run.leftovers.get(attack):
        found.append(f"{run.leftovers[attack]} processes alive after the eval")
    if attack == "ignore_sigterm" and a and (a.get("elapsed_s") or 0) > RUN_TIMEOUT_S + 20:
        found.append("outlived the wall clock")
    if status == "PASS" and attack != "honest":
        found.append("a PASS")
    if attack == "honest":
        return "its work graded"
    return ", ".join(found) or "nothing"


def status(attempt: dict[str, Any] | None) -> str:
    """``FAIL (tests_pass, probe)``: the status and why, in a few words."""
    if attempt is None:
        return "no attempt"
    s, d = attempt["status"], attempt.get("details") or {}
    why: list[str] = []
    if d.get("cut_off"):  # the limit is the reason (its measured figure varies from run to run)
        why.append(f"cut off: {d['cut_off']}")
    elif s in ("ERROR", "INFRA_ERROR", "TIMEOUT") and attempt.get("error"):
        why.append(str(attempt["error"].get("message", ""))[:60].split("\n")[0])
    elif d.get("outcome"):
        why.append(str(d["outcome"]))
    failed = [c["name"] for c in d.get("checks") or [] if c.get("passed") is False]
    if failed:
        why.append(", ".join(dict.fromkeys(failed)))
    return f"{s} ({'; '.join(why)})" if why else s


def seen_outside(t: Targets, before: dict[str, Any], listener_heard: list[str]) -> dict[str, Any]:
    """What changed outside every workdir during one eval."""
    written, contents = [], {}
    for folder in (t.outside, t.other_workdir, t.answers):
        for p in folder.iterdir():
            if p.name.startswith(("written-by-", "grader-escape-")):
                written.append(p.name)
                contents[p.name] = p.read_text()
    probe = t.answers / "tasks" / "probes" / "edit-tests.py"
    return {
        "written": written,
        "contents": contents,
        "heard": list(listener_heard),
        "baseline_changed": t.baseline.read_bytes() != before["baseline"],
        "probe_changed": probe.is_file() and probe.read_bytes() != before.get("probe", probe.read_bytes()),
        "lock_free": lock_free(t),
    }


def run_note(run: Run) -> str:
    """Whether the run went on to its last case with its journal, meta.json and scorecard whole."""
    if run.refused:
        return "refused"
    return "yes" if run.journal is None else run.journal


def rows(runs: list[Run], t: Targets, seen: dict[tuple[str, str, str], dict[str, Any]]) -> list[Row]:
    out: list[Row] = []
    labels = sorted(
        {(r.bench, r.harness) for r in runs}, key=lambda x: (["tasks", "code", "agent"].index(x[0]), x[1])
    )
    for attack in ATTACKS:
        for bench, harness in labels:
            pair = [r for r in runs if (r.bench, r.harness) == (bench, harness)]
            if not pair or not in_run(attack.name, pair[0]):
                continue
            cells: dict[str, tuple[str, str, str] | None] = {}
            for run in pair:
                if run.refused:
                    cells[run.mode] = ("not run", f"refused: {run.refused[:70]}", "refused")
                    continue
                what = got(attack.name, run, t, seen[(run.bench, run.harness, run.mode)])
                cells[run.mode] = (what, status(run.attempts.get(attack.name)), run_note(run))
            out.append(Row(attack.name, attack.tries, f"{bench} · {harness}", cells))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def render(table: list[Row]) -> str:
    """The README's table: one row per attack and benchmark · harness, fenced and unfenced."""
    head = (
        "| attack | benchmark · harness | fenced: agent got | fenced: attempt | run went on, journal whole "
        "| unfenced (`--no-fence`): agent got | unfenced: attempt | run went on, journal whole |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for row in table:
        cells = []
        for mode in ("fenced", "open"):
            cell = row.cells.get(mode)
            cells += ["not run", "", ""] if cell is None else list(cell)
        lines.append("| " + " | ".join(_cell(c) for c in [row.tries, row.label, *cells]) + " |")
    return head + "\n".join(lines) + "\n"


def figures(table: list[Row]) -> dict[str, dict[str, int]]:
    """Attacks tried, contained and leaked, per mode (the honest control and runs refused left out)."""
    out = {}
    for mode in ("fenced", "open"):
        tried = [
            r for r in table if r.attack != "honest" and r.cells.get(mode) and r.cells[mode][0] != "not run"
        ]
        leaked = [r for r in tried if r.leaked(mode)]
        out[mode] = {"tried": len(tried), "contained": len(tried) - len(leaked), "leaked": len(leaked)}
    return out


def gives_up(table: list[Row]) -> list[str]:
    """Unfenced, what still succeeds: what ``--no-fence`` gives up (``attack · benchmark · harness: got``)."""
    return [f"{r.tries} ({r.label}): {r.cells['open'][0]}" for r in table if r.leaked("open")]  # type: ignore[index]


def planted_gold(t: Targets) -> list[Path]:
    return [gold(t, b) for b in ("tasks", "code")]
