"""Edit the run's results: append a forged PASS to every journal, overwrite meta.json and the scorecard, edit
the baseline a later --compare reads."""

from __future__ import annotations

import json
from pathlib import Path

from hostile_attacks._common import denied


def _forge(path: Path, text: str, append: bool = False) -> str:
    try:
        with path.open("a" if append else "w", encoding="utf-8") as f:
            f.write(text)
        return f"GOT {'appended to' if append else 'wrote'} {path}"
    except OSError as exc:
        return denied(str(path), exc)


def run(params: dict, workdir: Path) -> str:
    marker = params["marker"]
    lines = []
    for root in params["results"]:
        runs = sorted(p.parent for p in Path(root).rglob("results.jsonl")) if Path(root).is_dir() else []
        if not runs:
            lines.append(denied(root, "no run directory found"))
        for run_dir in runs:
            forged = {"case_id": "forged", "iteration": 0, "status": "PASS", "forged_by": marker}
            lines.append(_forge(run_dir / "results.jsonl", json.dumps(forged) + "\n", append=True))
            lines.append(_forge(run_dir / "meta.json", json.dumps({"forged_by": marker})))
            lines.append(_forge(run_dir / "scorecard.json", json.dumps({"forged_by": marker})))
    for baseline in params["baselines"]:
        lines.append(_forge(Path(baseline), json.dumps({"forged_by": marker})))
    return "\n".join(lines)
