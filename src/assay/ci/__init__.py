"""assay in CI: what an event runs (plan), the release verify, JUnit and job summaries, workflow templates,
the release scorecard, backlog trends and the cost roll-up."""

from assay.ci._junit import case_verdicts, run_junit
from assay.ci._plan import Plan, PlannedJob, classify_tag, make_plan, rc_tags_of
from assay.ci._summary import job_summary, rerun_command, unspent_cases

__all__ = [
    "Plan",
    "PlannedJob",
    "case_verdicts",
    "classify_tag",
    "job_summary",
    "make_plan",
    "rc_tags_of",
    "rerun_command",
    "run_junit",
    "unspent_cases",
]
