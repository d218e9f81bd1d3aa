"""``assay eval code``'s own options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from assay.evals._held import HeldOptions
from assay.exec import Flag


class CodeOptions(HeldOptions):
    harness: Annotated[
        str | None,
        Flag(
            "--harness",
            envvar="ASSAY_HARNESS",
            help="Harness under test, full only (default reference) [ASSAY_HARNESS].",
        ),
    ] = None
    model: Annotated[
        str | None,
        Flag(
            "--model",
            envvar="ASSAY_MODEL",
            help="Model the harness runs on through the gateway (full; required there) [ASSAY_MODEL].",
        ),
    ] = None
    projects: Annotated[
        str | None, Flag("--projects", help="Run only these projects (comma list of eval/code names).")
    ] = None
    projects_dir: Annotated[
        Path | None, Flag("--projects-dir", help="Folder of projects (default eval/code).")
    ] = None
    work_root: Annotated[
        Path | None, Flag("--work-root", help="Where project copies are made (default a temporary folder).")
    ] = None
    run_timeout: Annotated[
        float | None,
        Field(ge=1),
        Flag("--run-timeout", help="Wall clock of one agent run, seconds (default 600)."),
    ] = None
    max_steps: Annotated[
        int | None, Field(ge=1), Flag("--max-steps", help="Model calls one agent run may make (default 30).")
    ] = None
    full_access: Annotated[
        bool, Flag("--full-access", help="claude-code: run every tool unasked (bypassPermissions).")
    ] = False
