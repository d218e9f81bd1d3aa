"""The `assay` command line (click). Each command body calls one library function."""

from __future__ import annotations

from assay.cli._main import cli, main

__all__ = ["cli", "main"]
