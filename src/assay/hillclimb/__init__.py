"""Held-out hillclimbing: ``assay hillclimb`` edits the agent's profile one change at a time and keeps only
real gains.

    history = run_hillclimb(HillclimbConfig(fixer="reference", fixer_model="local/smollm2",
                                            eval_options={"suite": "full", "category": "tool_choice"}))

The cases are split into train and held-out (:mod:`._split`); the fixer sees train failures only
(:mod:`._fixer`); each edit is checked in code (:mod:`._edits`), measured on both splits and kept or reverted
by the gate's comparison (:mod:`._measure`); ``fix_history.json`` (:mod:`._history`) records everything and
lets a stopped loop resume (:mod:`._loop`); what still fails is rolled up by root cause (:mod:`._rollup`).
"""

from __future__ import annotations

from assay.hillclimb._edits import find_leaks
from assay.hillclimb._history import FixHistory, RoundRecord, SplitScore, load_history
from assay.hillclimb._split import DEFAULT_SALT, Split, split_cases
from assay.hillclimb._target import get_target
from assay.hillclimb.loop import FLAT_ROUNDS, HillclimbConfig, resume_hillclimb, run_hillclimb

__all__ = [
    "DEFAULT_SALT",
    "FLAT_ROUNDS",
    "FixHistory",
    "HillclimbConfig",
    "RoundRecord",
    "Split",
    "SplitScore",
    "find_leaks",
    "get_target",
    "load_history",
    "resume_hillclimb",
    "run_hillclimb",
    "split_cases",
]
