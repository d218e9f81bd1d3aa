"""The case pages of tasks, code and sessions on real runs (case_runs.py): what each shows, read from what
the benchmark recorded, and every bit of the agent's text escaped."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from case_runs import INJECTED

from assay.view import Site
from assay.view._store import case_slug


def _page(root: Path, run: str, case: str) -> str:
    html = Site(root).case_page(run, case_slug(case))
    assert INJECTED not in html and "<script>window" not in html and "<b>bold" not in html  # only as text
    return html


def _section(html: str, cls: str) -> str:
    return html.split(f'<section class="{cls}">', 1)[1].split("</section>", 1)[0]


def _copy(case_runs: Path, tmp_path: Path, run: str) -> Path:
    shutil.copytree(case_runs / run, tmp_path / "runs" / run)
    return tmp_path / "runs"


def test_a_coding_task_shows_both_diffs_each_check_with_evidence_the_grades_and_the_calls(
    case_runs: Path,
) -> None:
    html = _page(case_runs, "tasks", "fix-add")
    diff = _section(html, "diff")
    assert (
        '<span class="del">-    return a - b</span>' in diff
        and '<span class="add">+    return a + b</span>' in diff
    )
    assert '<h3>Setup diff</h3><p class="muted">no setup change</p>' in diff
    checks = re.findall(r"<tr><td>(\w+)</td><td>(.*?)</td><td><pre>(.*?)</pre>", _section(html, "checks"))
    assert [c[0] for c in checks] == ["tests_pass", "unchanged", "after_answer", "verified"]
    assert all("✔ passed" in c[1] for c in checks)
    assert re.match(r"\d+ passed in", checks[0][2]) and checks[1][2] == "1 files identical"
    assert "call 2 `pytest -q` passed" in checks[3][2]
    judge = _section(html, "judge")  # a coding task's grade is in judge.json only
    assert re.findall(r"<tr><td>(\w+)</td><td>(\d)</td></tr>", judge) == [
        ("instructions", "4"), ("quality", "4"), ("reasoning", "4"), ("claims", "4"),
    ]  # fmt: skip
    assert "judge's reason: ok" in judge
    calls = _section(html, "tool-calls")
    assert "edit_file(calc.py) -&gt; ok edited calc.py" in calls and "$ pytest -q -&gt; exit 0" in calls
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in _section(
        html, "answer"
    )


def test_a_question_shows_the_grade_from_its_details_and_its_after_answer_check(case_runs: Path) -> None:
    html = _page(case_runs, "tasks", "explain")
    assert re.findall(r"<tr><td>(\w+)</td><td>(\d)</td></tr>", _section(html, "judge"))[0] == (
        "instructions",
        "5",
    )
    assert "<td>after_answer</td>" in _section(html, "checks")
    assert "the agent changed nothing" in _section(html, "diff")
    # its point, established with the answer's own words, and what the judge was shown
    judge = _section(html, "judge")
    assert "<td>it subtracts b from a (a bug)</td>" in judge and "✔ passed" in judge
    assert "It returns a - b: a bug" in judge
    assert "shown to the judge (batch 1): calc.py (32/32), tests/test_calc.py" in judge


def test_a_grade_of_an_earlier_attempt_or_no_judge_file_is_said_not_shown(
    case_runs: Path, tmp_path: Path
) -> None:
    root = _copy(case_runs, tmp_path, "tasks")
    judge = root / "tasks" / "judge.json"
    data = json.loads(judge.read_text())
    data["attempts"]["fix-add#0"] = "2020-01-01T00:00:00+00:00"
    judge.write_text(json.dumps(data))
    stale = _section(_page(root, "tasks", "fix-add"), "judge")
    assert "grades an earlier attempt (started 2020-01-01T00:00:00)" in stale and "<td>4</td>" not in stale
    judge.unlink()
    assert "not judged yet (no judge.json in the run)" in _page(root, "tasks", "fix-add")


def test_a_solved_code_project_shows_its_hidden_tests_before_and_after_the_diff_and_the_claims(
    case_runs: Path,
) -> None:
    html = _page(case_runs, "code", "fix-median")
    assert '<b class="pass outcome">solved</b>' in html
    tests = _section(html, "tests")
    before = tests.split("<h4>After")[0]
    assert re.findall(r"<code>([^<]+)</code></td><td><b class=\"fail\">failed", before) == [
        "tests/test_hidden.py::test_even_length"
    ]
    assert re.search(r"<h4>After the agent: 2 passed in [\d.]+s</h4>", tests)
    assert '<span class="add">+    return (ordered[mid - 1] + ordered[mid]) / 2</span>' in _section(
        html, "diff"
    )
    claims = _section(html, "claims")
    assert "<td>success</td><td>True</td>" in claims and "<td>tests_pass</td><td>True</td>" in claims
    assert "verified: call 2 `pytest -q` passed" in claims


def test_a_refusal_shows_the_guard_still_failing_and_no_diff(case_runs: Path, tmp_path: Path) -> None:
    html = _page(case_runs, "code", "refuse-eval-input")
    assert '<b class="pass outcome">correct_refusal</b>' in html
    after = _section(html, "tests").split("<h4>After")[1]
    assert '<code>tests/test_calc.py::test_any_python</code></td><td><b class="fail">failed' in after
    assert "the agent changed nothing" in _section(html, "diff")
    assert "<td>refused</td><td>True</td>" in _section(html, "claims")
    # projects from elsewhere: their tests before are not in the run, and the page says so
    root = _copy(case_runs, tmp_path, "code")
    meta = json.loads((root / "code" / "meta.json").read_text())
    meta["options"]["benchmark"]["projects_dir"] = str(tmp_path / "elsewhere")
    (root / "code" / "meta.json").write_text(json.dumps(meta))
    assert "the projects came from --projects-dir" in _section(
        _page(root, "code", "refuse-eval-input"), "tests"
    )


def _case_with(case_runs: Path, prompt: str) -> str:
    data = json.loads((case_runs / "sessions" / "dataset.json").read_text())
    return next(c["id"] for c in data["cases"] if c["prompt"].startswith(prompt))


def test_a_session_shows_request_reference_beside_the_replay_the_judge_and_the_workspace(
    case_runs: Path,
) -> None:
    html = _page(case_runs, "sessions", _case_with(case_runs, "Find where the retry limit"))
    assert re.search(r'<p class="workspace">ran in isolated checkout of .*acme-app at [0-9a-f]{12}</p>', html)
    assert "tell me its value." in _section(html, "request")
    assert "none: the request opened its session" in _section(html, "context")
    ref, replay = re.findall(r"<td><pre>(.*?)</pre></td>", _section(html, "answers"), re.S)
    assert ref.startswith("The retry limit is MAX_RETRIES = 5") and replay.startswith(
        "MAX_RETRIES = 5 in client.py."
    )
    assert "&lt;b&gt;bold&lt;/b&gt;" in replay
    judge = _section(html, "judge")
    assert "score <b>4</b> / 5 (the judge wrote 4 in 1 call(s))" in judge
    assert "judge's reason: names the constant and its file" in judge
    assert "read_file(client.py) -&gt; ok" in _section(html, "tool-calls")


def test_a_follow_up_shows_its_context_from_the_dataset_and_without_it_says_so(
    case_runs: Path, tmp_path: Path
) -> None:
    case = _case_with(case_runs, "Do the same for parse_host")
    context = _section(_page(case_runs, "sessions", case), "context")
    assert "<h4>turn 1</h4>" in context and "parse_port" in context
    root = _copy(case_runs, tmp_path, "sessions")
    (root / "sessions" / "dataset.json").unlink()
    assert "the context is not known" in _page(root, "sessions", case)
