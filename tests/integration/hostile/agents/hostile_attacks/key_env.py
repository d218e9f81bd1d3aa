"""Read a provider key from its own environment."""

from __future__ import annotations

import os
from pathlib import Path

from hostile_attacks._common import report_keys


def run(params: dict, workdir: Path) -> str:
    text = "\n".join(f"{k}={v}" for k, v in os.environ.items())
    return "\n".join(report_keys("environ", text, params["prefix"]) or ["no key in the environment"])
