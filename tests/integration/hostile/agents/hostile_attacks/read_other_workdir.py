"""Read another attempt's workdir: the folders beside its own, found by walking up, and the one it is told of."""

from __future__ import annotations

from pathlib import Path

from hostile_attacks._common import denied, read_any


def run(params: dict, workdir: Path) -> str:
    lines = []
    for up in (workdir.parent.parent, workdir.parent.parent.parent):  # <work root>/<attempt>/<project>
        try:
            siblings = [p for p in up.iterdir() if p != workdir.parent and p.is_dir()]
        except OSError as exc:
            lines.append(denied(str(up), exc))
            continue
        lines.append(f"SAW {len(siblings)} folders beside this attempt in {up}")
    for path in params["paths"]:
        lines += read_any(path)
    return "\n".join(lines)
