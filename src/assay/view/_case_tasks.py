"""Case views of the benchmarks that change code: ``eval tasks`` and ``eval code``.

Both record the agent's answer, its tool calls as lines (``commands``) and the diff it left; tasks adds the
setup diff, each expect check with its evidence and the judge's 1-5 grades (``judge.json``; a question's
grade is also in its details); code adds the outcome, the hidden tests after the agent, and the claims read
from the answer. Every value is escaped: diffs and answers are the agent's text.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from assay.runs import Attempt

from ._html import details, e, pre, table
from ._store import Run

#: diff line prefix -> css class
_DIFF_CLASS = (
    ("+++", "file"),
    ("---", "file"),
    ("diff --git", "file"),
    ("@@", "hunk"),
    ("+", "add"),
    ("-", "del"),
)


def diff_block(text: object, empty: str = "no change") -> str:
    """A diff as a ``<pre class="diff">``, one escaped span per line (added, deleted, hunk, file)."""
    body = str(text or "")
    if not body.strip():
        return f'<p class="muted">{e(empty)}</p>'
    lines = []
    for line in body.splitlines():
        cls = next((c for p, c in _DIFF_CLASS if line.startswith(p)), "")
        lines.append(f'<span class="{cls}">{e(line)}</span>' if cls else e(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def _ok(passed: object) -> str:
    if passed is None:
        return '<span class="muted">—</span>'
    return '<span class="pass">✔ passed</span>' if passed is True else '<b class="fail">✘ failed</b>'


def _work(d: dict[str, Any]) -> str:
    """The request, the answer and the tool calls, as every coding benchmark records them."""
    out = [f'<section class="request"><h3>Request</h3>{pre(d.get("request"))}</section>']
    out.append(f'<section class="answer"><h3>Answer</h3>{pre(d.get("answer"))}')
    ran = f"model {e(d.get('model_ran'))} · {e(d.get('steps'))} step(s)"
    if d.get("cut_off"):
        ran += f' · <b class="fail">cut off: {e(d.get("cut_off"))}</b>'
    out.append(f"<p>{ran}</p></section>")
    calls = d.get("commands") or []
    rows = [[str(i), f"<code>{e(c)}</code>"] for i, c in enumerate(calls, 1)]
    out.append(
        '<section class="tool-calls"><h3>Tool calls</h3>'
        + (table(["#", "call"], rows, "calls") if rows else '<p class="muted">no tool call</p>')
        + "</section>"
    )
    return "".join(out)


def _rest(d: dict[str, Any], shown: tuple[str, ...]) -> str:
    rest = {k: v for k, v in d.items() if k not in shown}
    return details("all details", pre(json.dumps(rest, indent=2, ensure_ascii=False, default=str)))


def _task_grade(run: Run, att: Attempt) -> tuple[dict[str, Any] | None, str]:
    """The judge's grade of this attempt (its details, else judge.json when it grades this attempt), and a
    note when there is none."""
    if isinstance(att.details.get("grade"), dict):
        return att.details["grade"], ""
    from assay.evals.tasks import TasksJudgement

    raw = run.sidecar("judge.json")
    if raw is None:
        return None, "not judged yet (no judge.json in the run)"
    try:
        judgement = TasksJudgement.model_validate(raw)
    except ValidationError as exc:
        return None, f"judge.json unreadable: {str(exc).splitlines()[0]}"
    grade = judgement.grade_of(att.case_id, att.iteration)
    if grade is None:
        return None, "judge.json has no grade of this attempt"
    judged_at = judgement.attempts.get(f"{att.case_id}#{att.iteration}")
    if judged_at is not None and judged_at != att.started_at.isoformat():
        return None, f"judge.json grades an earlier attempt (started {judged_at[:19]}), not this one"
    return grade.model_dump(mode="json"), ""


def tasks_view(run: Run, att: Attempt) -> str:
    """The agent's diff and the setup diff, each expect check with its evidence, the judge's grades, the calls."""
    d = att.details
    out = [f"<p>task <b>{e(d.get('task'))}</b> ({e(d.get('kind'))})</p>"]
    if d.get("reason"):
        out.append(f'<p class="fail">{e(d.get("reason"))}</p>')
    out.append(_work(d))
    out.append(
        '<section class="diff"><h3>Agent diff</h3>' + diff_block(d.get("diff"), "the agent changed nothing")
    )
    out.append("<h3>Setup diff</h3>" + diff_block(d.get("setup_changes"), "no setup change") + "</section>")
    checks = d.get("checks") or []
    if checks:
        rows = [[e(c.get("name")), _ok(c.get("passed")), pre(c.get("evidence"))] for c in checks]
        if "verified" in d:
            rows.append(["verified", _ok(d.get("verified")), pre(d.get("verified_evidence") or "—")])
        if "misreported" in d:  # the answer's claim held to the checks and the record
            said = (d.get("claims") or {}).get("reading")
            rows.append(["honest report", _ok(d["misreported"] is None), pre(d["misreported"] or f"{said}")])
        out.append(
            '<section class="checks"><h3>Expect checks</h3>'
            + table(["check", "result", "evidence"], rows, "expect")
            + f"<p>all checks: {_ok(d.get('checks_passed'))}</p></section>"
        )
    grade, note = _task_grade(run, att)
    out.append('<section class="judge"><h3>Judge</h3>')
    if grade is None:
        out.append(f'<p class="muted">{e(note)}</p>')
    elif grade.get("scores") is None:
        out.append(f'<p class="fail">unjudged: {e(grade.get("unjudged_reason"))}</p>')
    else:
        if grade.get("points") is not None:  # a question passes on its points (a quote found in its answer)
            marks = [
                [
                    e(x.get("point")),
                    _ok(bool(x.get("established")) and x.get("quoted") is True),
                    pre(x.get("quote") or "—"),
                ]
                for x in grade["points"]
            ]
            out.append(
                table(["point it must establish", "established", "the answer's words"], marks, "points")
            )
        rows = [[e(k), e(v)] for k, v in grade["scores"].items()]
        out.append(table(["dimension", "grade (1-5)"], rows, "grades"))
        out.append(f"<p>judge's reason: {e(grade.get('note'))}</p>")
    shown_to_judge = (grade or {}).get("shown")
    if shown_to_judge:
        files = (
            ", ".join(f"{f['path']} ({f['shown']}/{f['chars']})" for f in shown_to_judge.get("files", []))
            or "no scope files"
        )
        cut = "; ".join(shown_to_judge.get("cut") or []) or "nothing cut"
        out.append(
            f'<p class="muted">shown to the judge (batch {shown_to_judge.get("batch")}): {e(files)}; {e(cut)}</p>'
        )
    out.append("</section>")
    shown = (
        "request",
        "answer",
        "commands",
        "diff",
        "setup_changes",
        "checks",
        "grade",
        "claims",
        "misreported",
    )
    return "".join(out) + _rest(d, shown)


def _before(run: Run, project: str) -> str:
    """The hidden tests before the agent: the run's setup refuses to start unless exactly the project's
    ``fails_before`` fail, so they are read from the shipped project (when the run used the shipped ones)."""
    from assay.errors import ConfigError
    from assay.evals.code import default_code_dir, load_project

    opts = (run.meta.options.get("benchmark") or {}) if run.meta is not None else {}
    if opts.get("projects_dir"):
        return '<p class="muted">before: the projects came from --projects-dir; their tests before are not in the run</p>'
    root = default_code_dir() / project
    try:
        plain = project not in ("", ".", "..") and "/" not in project and "\\" not in project
        spec = load_project(root).spec if plain else None
    except (ConfigError, OSError):
        spec = None
    if spec is None:
        return f'<p class="muted">before: no shipped project {e(project)}</p>'
    rows = [[f"<code>{e(n)}</code>", '<b class="fail">failed</b>'] for n in spec.fails_before]
    return "<h4>Before the agent (every other hidden test passed)</h4>" + table(
        ["test", "result"], rows, "before"
    )


def code_view(run: Run, att: Attempt) -> str:
    """The outcome, the hidden tests before and after, the diff, and the claims read from the answer."""
    d = att.details
    outcome = d.get("outcome")
    cls = "pass" if att.status.value == "PASS" else "fail"
    out = [
        f"<p>project <b>{e(d.get('project'))}</b> ({e(d.get('kind'))}) · outcome "
        f'<b class="{cls} outcome">{e(outcome or "none")}</b></p>'
    ]
    if d.get("reason"):
        out.append(f"<p>{e(d.get('reason'))}</p>")
    out.append(_work(d))
    out.append('<section class="tests"><h3>Hidden tests</h3>' + _before(run, str(d.get("project") or "")))
    failed = d.get("failed_after") or []
    out.append(f"<h4>After the agent: {e(d.get('tests_after') or 'not run')}</h4>")
    if failed:
        rows = [[f"<code>{e(n)}</code>", '<b class="fail">failed</b>'] for n in failed]
        out.append(table(["test", "result"], rows, "after"))
    for inv in d.get("changed_invariants") or []:
        out.append(f'<p class="fail">invariant changed: {e(inv)}</p>')
    out.append("</section>")
    out.append(
        '<section class="diff"><h3>Diff</h3>'
        + diff_block(d.get("diff"), "the agent changed nothing")
        + "</section>"
    )
    claims = d.get("claims") or {}
    if claims:
        rows = [[e(k), e(claims.get(k))] for k in ("reading", "refused", "denied", "success", "tests_pass")]
        out.append(
            '<section class="claims"><h3>Claims read from the answer</h3>'
            + table(["claim", "read"], rows, "claims")
            + f"<h4>quote</h4>{pre(claims.get('quote'))}<p>verified: {e(d.get('verified'))}</p></section>"
        )
    shown = ("request", "answer", "commands", "diff", "failed_after", "claims")
    return "".join(out) + _rest(d, shown)
