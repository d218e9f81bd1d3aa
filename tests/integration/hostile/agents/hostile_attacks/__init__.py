"""The attacks of the hostile agent, one module each; :func:`run` picks the one the prompt names.

python harness:  python:hostile_attacks:run   (the folder above on the import path)
a new process:   python -m hostile_attacks "HOSTILE {json}" MARKER
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path


def parse(prompt: str) -> dict:
    for line in prompt.splitlines():
        if line.startswith("HOSTILE "):
            return json.loads(line[len("HOSTILE ") :])
    raise SystemExit("hostile agent: the prompt names no attack (no HOSTILE line)")


def run(prompt: str, workdir: Path | str) -> str:
    """Carry out the attack the prompt's ``HOSTILE`` line names; the answer says what it got."""
    params = parse(prompt)
    module = importlib.import_module(f"hostile_attacks.{params['attack']}")
    return module.run(params, Path(workdir))
