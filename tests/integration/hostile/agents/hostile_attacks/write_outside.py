"""Write outside the workdir: a file of its own beside the eval's, and into the folders it is told of."""

from __future__ import annotations

from pathlib import Path

from hostile_attacks._common import denied


def run(params: dict, workdir: Path) -> str:
    lines = []
    for folder in params["paths"]:
        target = Path(folder) / f"written-by-{params['marker']}"
        try:
            target.write_text(params["marker"])
            lines.append(f"GOT wrote {target}")
        except OSError as exc:
            lines.append(denied(str(target), exc))
    return "\n".join(lines)
