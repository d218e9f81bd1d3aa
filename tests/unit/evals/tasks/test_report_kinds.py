"""The swebench and realfix report sections on attempts as the suites record them: a NOT_RUN instance shows its
reason and is not counted in the resolved rate, the official grader is named, and a diff's size counts the
lines of its hunks (a removed line that starts with ``--`` too, a binary file as a file)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

from assay.evals.tasks._report_kinds import patch_stat, swebench_rows, swebench_section
from assay.evals.tasks._swebench_grade import Verdict
from assay.runs.records import Attempt, Scorecard, Status, SubjectConfig, Summary
from assay.stats import wilson_interval

DIFF = """diff --git a/a.py b/a.py
index 1..2 100644
--- a/a.py
+++ b/a.py
@@ -1,3 +1,2 @@
--- a comment that starts with two dashes
-x = 1
+x = 2
 y = 3
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
++++ looks like a header
diff --git a/logo.png b/logo.png
new file mode 100644
GIT binary patch
literal 3
KcmZ>Y%K!iX
"""


def test_a_patch_stat_counts_hunk_lines_only() -> None:
    stat = patch_stat(DIFF)
    assert (stat.files, stat.added, stat.removed) == (3, 2, 2)
    assert stat.text() == "+2/-2 in 3 files" and patch_stat("").text() == "+0/-0 in 0 files"


def _attempt(iid: str, status: Status, verdict: Verdict | None, **details: object) -> Attempt:
    d = dict(details)
    if verdict is not None:
        d["grade"], d["grader"] = asdict(verdict), verdict.grader
    return Attempt(case_id=iid, status=status, started_at=datetime(2026, 1, 1, tzinfo=UTC), details=d)


def test_the_swebench_section_names_the_grader_and_leaves_not_run_out_of_the_resolved_rate() -> None:
    resolved = Verdict("o__r-1", "official", "model", "resolved", True, [2, 2], [5, 5])
    unbuilt = Verdict("o__r-2", "official", "model", "not_run", None, reason="no spec for version 9.9")
    unresolved = Verdict("o__r-3", "official", "model", "unresolved", False, [0, 1], [3, 4])
    web = [{"call": 2, "tool": "run_shell", "why": "shell command runs curl: curl x"}]
    attempts = [
        _attempt("o__r-1", Status.PASS, resolved, compliance=[]),
        _attempt(
            "o__r-2",
            Status.NOT_RUN,
            unbuilt,
            compliance=[],
            reason="grader: official could not grade it: no spec for version 9.9",
        ),
        _attempt("o__r-3", Status.FAIL, unresolved, compliance=web, reason="grader: official: unresolved"),
    ]
    rows = swebench_rows(attempts)
    assert [r.resolved for r in rows] == [True, None, False]
    low, high = wilson_interval(1, 2)
    card = Scorecard.model_construct(
        config=SubjectConfig(extra={"grader": "official"}),
        summary=Summary(
            counts={"PASS": 1, "FAIL": 1, "NOT_RUN": 1},
            total=3,
            measured=2,
            pass_rate=0.5,
            pass_rate_low=low,
            pass_rate_high=high,
        ),
        extra={"swebench": [r.model_dump(mode="json") for r in rows]},
    )
    text = swebench_section(card)
    assert "- grader: official (the SWE-bench harness, one Docker image per instance)" in text
    assert "never compared" in text
    assert f"- resolved: **50.0%** of 2 measured attempts (95% Wilson interval {100 * low:.1f}% – " in text
    assert "- not counted: 1 NOT_RUN (not validated, or not buildable here), 0 ungraded" in text
    assert "| o__r-1 | 0 | PASS | yes | yes | 2/2 | 5/5 | none | - |" in text
    assert (
        "| o__r-2 | 0 | NOT_RUN | - | - | - | - | none | grader: official could not grade it: no spec" in text
    )
    assert "| o__r-3 | 0 | FAIL | no | no | 0/1 | 3/4 | 1: shell command runs curl: curl x |" in text


def test_the_swebench_section_states_how_many_instances_were_validated() -> None:
    from assay.evals.tasks._report_kinds import swebench_validation

    def checked(case: str, status: Status, validated: bool | None, reason: str = "") -> Attempt:
        details = {} if validated is None else {"validation": {"validated": validated, "reason": reason}}
        return _attempt(case, status, None, compliance=[], reason=reason, **details)

    attempts = [
        checked("a__b-1", Status.PASS, True),
        checked("a__b-2", Status.NOT_RUN, False, "the gold patch does not resolve it here"),
        checked("a__b-3", Status.SKIPPED, None),
    ]
    check = swebench_validation(attempts)
    assert (check.instances, check.validated, check.not_asked) == (3, 1, 1)
    assert check.not_validated == {"a__b-2": "the gold patch does not resolve it here"}
    card = Scorecard.model_construct(
        config=SubjectConfig(extra={"grader": "local"}),
        summary=Summary(counts={"PASS": 1, "NOT_RUN": 1, "SKIPPED": 1}, total=3, measured=1, pass_rate=1.0),
        extra={"swebench": [], "swebench_validation": check.model_dump(mode="json")},
    )
    text = swebench_section(card)
    assert (
        "- grader validated on **1 of 3** instances (gold resolves, empty does not, here; only those count)"
        in text
    )
    assert "  - not validated: a__b-2: the gold patch does not resolve it here" in text
