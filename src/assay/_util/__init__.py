"""Utilities below everything: progress, Ctrl-C, the assay home folder, secret scrubbing. Imports nothing of
assay except ``assay.errors``."""

from __future__ import annotations

from assay._util._cancel import (
    GRACE_S,
    Cancelled,
    cancel_requested,
    check_cancelled,
    run_interruptible,
    run_process,
    say_stopped,
    stop_said,
)
from assay._util._json_file import read_json_file
from assay._util._paths import assay_home
from assay._util._progress import Phase, phase, reporting, ticking
from assay._util._scrub import MARKER, Anonymizer, Scrubber, looks_like_secret_name, write_scrubbed

__all__ = [
    "GRACE_S",
    "MARKER",
    "Anonymizer",
    "Cancelled",
    "Phase",
    "Scrubber",
    "assay_home",
    "cancel_requested",
    "check_cancelled",
    "looks_like_secret_name",
    "phase",
    "read_json_file",
    "reporting",
    "run_interruptible",
    "run_process",
    "say_stopped",
    "stop_said",
    "ticking",
    "write_scrubbed",
]
