"""assay in CI: what an event runs (plan), the release verify, JUnit and job summaries, workflow templates,
the release scorecard, backlog trends and the cost roll-up."""

from assay.ci._junit import case_verdicts, run_junit
from assay.ci._plan import Plan, PlannedJob, classify_tag, make_plan, rc_tags_of
from assay.ci._summary import CiVerdict, ci_verdict, job_summary, unspent_cases

__all__ = [
    "CiVerdict",
    "Plan",
    "PlannedJob",
    "case_verdicts",
    "ci_verdict",
    "classify_tag",
    "job_summary",
    "make_plan",
    "rc_tags_of",
    "run_junit",
    "unspent_cases",
]
