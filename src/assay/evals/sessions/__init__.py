"""``assay eval sessions``: replay real coding-agent sessions; a judge grades each answer against the recorded one.

Real sessions are the dataset: Claude Code's ``~/.claude/projects/<slug>/*.jsonl`` and Codex CLI's
``~/.codex/sessions/**/*.jsonl``. Extraction is picky (``_extract``); each kept request is replayed in the
recorded repository at the recorded commit (``_replay``) and graded 0-5 by a separate judge (``_judge``).

    assay eval sessions --project ~/src/app --dataset-only --explain
    assay eval sessions --project ~/src/app --model local/smollm2
"""

from __future__ import annotations

from assay.evals.sessions._bench import SessionsBenchmark, dataset_for, lead_line
from assay.evals.sessions._dataset import explain, write_dataset
from assay.evals.sessions._options import SessionsOptions

__all__ = ["SessionsBenchmark", "SessionsOptions", "dataset_for", "explain", "lead_line", "write_dataset"]
