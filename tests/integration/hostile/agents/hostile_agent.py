#!/usr/bin/env python3
"""A hostile agent, shipped as a test double: it does not do the task, it attacks the eval running it.

The prompt holds one line ``HOSTILE {json}``: ``attack`` names a module of ``hostile_attacks/`` (one attack
each), the rest are its targets (paths, a port, caps) and ``marker``, a word every process of the attack carries
in its command line so the suite can find what is left. It answers with what it got: ``GOT <what> <text>`` lines
(never a real secret: the key attacks look only for the fake key's shape the suite plants).

    command harness:  command:"/abs/.../hostile_agent.py {prompt}"
    python harness:   python:hostile_attacks:run   (this folder on the import path)

Standard library only: under the fence it runs on whatever Python the agent is given.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_attacks import run

if __name__ == "__main__":
    text = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
    print(run(text, os.getcwd()), flush=True)
