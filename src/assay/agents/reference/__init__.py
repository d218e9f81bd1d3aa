"""The ``reference`` harness: assay's own tool-calling agent, its tools and its profile folder."""

from __future__ import annotations

from assay.agents.reference._profile import DEFAULT_PROFILE, INIT_COMMAND, Profile, init_profile, load_profile
from assay.agents.reference._tools import TOOLS, parse_pytest_summary
from assay.agents.reference.harness import ReferenceHarness

__all__ = [
    "DEFAULT_PROFILE", "INIT_COMMAND", "TOOLS", "Profile", "ReferenceHarness", "init_profile", "load_profile",
    "parse_pytest_summary",
]  # fmt: skip
