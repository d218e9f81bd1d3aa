"""The control: an honest agent that does the work (the suite's verdicts are not failures by construction)."""

from __future__ import annotations

from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    for rel, (old, new) in params["edits"].items():
        path = workdir / rel
        path.write_text(path.read_text().replace(old, new))
    return params.get("answer", "I changed the code as asked.")
