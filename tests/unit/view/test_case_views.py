"""The tasks, code and sessions case views on the edges a pr run does not reach: diff lines classed and
escaped, a grade the judge could not give, a cut-off agent, a session never graded, an unreadable dataset,
and a project the shipped ones do not have."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from assay.runs.records import Attempt
from assay.view._case_sessions import sessions_view
from assay.view._case_tasks import code_view, diff_block, tasks_view
from assay.view._store import Run


def _att(status: str, **details: object) -> Attempt:
    return Attempt(case_id="c1", status=status, started_at=datetime(2026, 1, 1, tzinfo=UTC), details=details)


def test_diff_lines_are_classed_and_escaped() -> None:
    html = diff_block("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = '<b>'\n+a = '</pre><script>'\n ctx")
    assert '<span class="file">--- a/x.py</span>' in html and '<span class="hunk">@@ -1 +1 @@</span>' in html
    assert '<span class="del">-a = &#x27;&lt;b&gt;&#x27;</span>' in html
    assert '<span class="add">+a = &#x27;&lt;/pre&gt;&lt;script&gt;&#x27;</span>' in html
    assert html.endswith("\n ctx</pre>") and "<script>" not in html
    assert diff_block("  \n", "nothing here") == '<p class="muted">nothing here</p>'


def test_an_unjudged_question_and_a_cut_off_agent_are_said(tmp_path: Path) -> None:
    grade = {"task_id": "c1", "iteration": 0, "scores": None, "note": "", "unjudged_reason": "no JSON object"}
    att = _att("FAIL", task="c1", kind="question", answer="x", cut_off="max_steps", grade=grade)
    html = tasks_view(Run("r", tmp_path, None), att)
    assert '<p class="fail">unjudged: no JSON object</p>' in html
    assert '<b class="fail">cut off: max_steps</b>' in html and "no tool call" in html


def test_an_unreadable_judge_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "judge.json").write_text(json.dumps({"grades": "many"}))
    html = tasks_view(Run("r", tmp_path, None), _att("PASS", task="c1", kind="coding"))
    assert "judge.json unreadable" in html


def test_a_session_never_graded_and_an_unreadable_dataset(tmp_path: Path) -> None:
    (tmp_path / "dataset.json").write_text("[1, 2")
    att = _att("INFRA_ERROR", prompt="<i>do it</i>", reference="done", workspace="a copy of /x")
    html = sessions_view(Run("r", tmp_path, None), att)
    assert "&lt;i&gt;do it&lt;/i&gt;" in html and "<i>" not in html
    assert "not graded" in html and "the context is not known" in html
    judge = {"score": None, "reason": "", "raw": ["fine, <no JSON>"], "calls": 3}
    html = sessions_view(Run("r", tmp_path, None), _att("ERROR", prompt="p", judge=judge))
    assert "no usable grade after 3 call(s)" in html and "<pre>fine, &lt;no JSON&gt;</pre>" in html


def test_a_project_not_shipped_has_no_before(tmp_path: Path) -> None:
    for name in ("no-such-project", "../etc", ".."):
        html = code_view(Run("r", tmp_path, None), _att("FAIL", project=name, kind="fix"))
        assert "before: no shipped project" in html and "After the agent: not run" in html
