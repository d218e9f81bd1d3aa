"""The workdir's guardrails: '..' escapes, symlinks out and absolute paths are refused, both by the path check
and through the agent (the refusal is the tool result, the run goes on); the best-effort shell check; commands
run with the workdir as cwd and HOME, under a timeout, with capped output and their edits recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.agents import RunSpec
from assay.agents._workdir import PathRefused, Workdir
from assay.agents.reference import ReferenceHarness, parse_pytest_summary
from assay.models.scripted import ScriptedModel

SECRET = "the answer key: 42"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workdir with a file, a symlink to a folder outside holding a secret, and a symlinked file out."""
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("x = 1\n")
    outside = tmp_path / "answers"
    outside.mkdir()
    (outside / "key.txt").write_text(SECRET)
    (work / "out").symlink_to(outside)
    (work / "key_link.txt").symlink_to(outside / "key.txt")
    (work / "inner_link.py").symlink_to(work / "src" / "app.py")
    return work, outside


def test_path_check(layout: tuple[Path, Path]) -> None:
    work, outside = layout
    wd = Workdir(work)
    assert wd.resolve("src/app.py") == (work / "src" / "app.py").resolve()
    assert wd.resolve("src/../src/app.py") == (work / "src" / "app.py").resolve()  # stays inside: fine
    assert wd.resolve(str(work / "src")) == (work / "src").resolve()  # absolute inside: fine
    assert wd.resolve("~/src") == (work / "src").resolve()  # HOME is the workdir
    assert wd.resolve("inner_link.py") == (work / "src" / "app.py").resolve()  # a symlink inside: fine
    assert wd.resolve("") == wd.root and wd.resolve(None) == wd.root
    refusals = {
        "../answers/key.txt": "refused: '../answers/key.txt' escapes the workdir ('..')",
        "src/../../answers": "refused: 'src/../../answers' escapes the workdir ('..')",
        str(outside / "key.txt"): f"refused: absolute path '{outside / 'key.txt'}' is outside the workdir",
        "/etc/passwd": "refused: absolute path '/etc/passwd' is outside the workdir",
        "out/key.txt": "refused: 'out/key.txt' is a symlink that leads outside the workdir",
        "key_link.txt": "refused: 'key_link.txt' is a symlink that leads outside the workdir",
        "out/new.txt": "refused: 'out/new.txt' is a symlink that leads outside the workdir",
        "a\0b": "refused: a path with a NUL byte",
    }
    for arg, why in refusals.items():
        with pytest.raises(PathRefused) as caught:
            wd.resolve(arg)
        assert str(caught.value) == why


def test_shell_check_is_best_effort_but_stops_the_plain_cases(layout: tuple[Path, Path]) -> None:
    work, outside = layout
    wd = Workdir(work)
    for ok in (
        "ls -la src",
        "cat src/app.py | wc -l > /dev/null",
        "python -c 'print(1/2)'",
        f"cat {work}/src/app.py",
        "curl http://127.0.0.1:8000/x",
        "cat ~/src/app.py",
        "echo ..hidden",
        "sed -i 's/a/b/' src/app.py",
    ):
        wd.check_command(ok)
    refused = {
        "cat ../answers/key.txt": "'..' path component",
        "cd .. && ls": "'..' path component",
        "ls src/../..": "'..' path component",
        f"cat {outside}/key.txt": "an absolute path outside the workdir",
        "cat </etc/passwd": "'/etc/passwd', an absolute path outside",
        "cp src/app.py /tmp/x": "'/tmp/x', an absolute path outside",
        "X=/etc; cat $X/passwd": "'/etc'",
        "cd / && ls": "'/', an absolute path outside",
        f"cat {work}/out/key.txt": "an absolute path outside the workdir",  # through the symlink out
        "ls ~root": "another user's home",
    }
    for command, why in refused.items():
        with pytest.raises(PathRefused, match="refused: ") as caught:
            wd.check_command(command)
        assert why in str(caught.value), command


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def test_the_agent_is_refused_and_goes_on(layout: tuple[Path, Path]) -> None:
    work, outside = layout
    model = ScriptedModel(
        [
            _call("read_file", path="../answers/key.txt"),
            _call("read_file", path="out/key.txt"),
            _call("read_file", path=str(outside / "key.txt")),
            _call("write_file", path="../answers/planted.txt", content="x"),
            _call("write_file", path="out/planted.txt", content="x"),
            _call("edit_file", path="key_link.txt", old="42", new="43"),
            _call("list_files", path="out"),
            _call("grep", pattern="answer key"),
            _call("run_shell", command="cat ../answers/key.txt"),
            _call("run_shell", command=f"cat {outside}/key.txt"),
            _call("run_tests", args=["../answers"]),
            _call("list_files"),
            {"text": "could not get out"},
        ]
    )
    result = await ReferenceHarness(model=model).run("find the answer key", RunSpec(workdir=work))
    assert result.answer == "could not get out" and result.cut_off is None
    statuses = [c.status for c in result.tool_record]
    assert statuses[:7] == [
        "refused: '../answers/key.txt' escapes the workdir ('..')",
        "refused: 'out/key.txt' is a symlink that leads outside the workdir",
        f"refused: absolute path '{outside / 'key.txt'}' is outside the workdir",
        "refused: '../answers/planted.txt' escapes the workdir ('..')",
        "refused: 'out/planted.txt' is a symlink that leads outside the workdir",
        "refused: 'key_link.txt' is a symlink that leads outside the workdir",
        "refused: 'out' is a symlink that leads outside the workdir",
    ]
    assert result.tool_record[7].status == "ok" and result.tool_record[7].result_summary == "no matches"
    assert statuses[8].startswith("refused: the command has a '..' path component")
    assert (
        statuses[9] == f"refused: the command names '{outside}/key.txt', an absolute path outside the workdir"
    )
    assert statuses[10].startswith("refused: the command has a '..' path component")
    # the model is told why, as the tool's result
    tool_answers = [e.content for e in result.transcript if e.role == "tool"]
    assert tool_answers[0] == statuses[0]
    assert all(SECRET not in text for text in tool_answers)
    # the listing shows the symlinks out, without following them
    assert tool_answers[11] == (
        "inner_link.py\nkey_link.txt@ (a symlink out of the workdir, not followed)\n"
        "out@ (a symlink out of the workdir, not followed)\nsrc/"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["key.txt"]
    assert (outside / "key.txt").read_text() == SECRET
    assert result.edited_paths == []


async def test_shell_runs_in_the_workdir_with_a_timeout_a_cap_and_its_edits(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "old.txt").write_text("old")
    model = ScriptedModel(
        [
            _call("run_shell", command="pwd; echo $HOME"),
            _call("run_shell", command="echo new > made.txt; rm old.txt; mkdir -p d && echo x > d/f.txt"),
            _call("run_shell", command="echo oops >&2; exit 3"),
            _call("run_shell", command="sleep 10", timeout_s=0.3),
            _call("run_shell", command="yes | head -c 50000"),
            {"text": "done"},
        ]
    )
    harness = ReferenceHarness(model=model, output_cap=1000)
    result = await harness.run("go", RunSpec(workdir=work))
    pwd, edit, fail, slow, loud = result.tool_record
    root = str(work.resolve())
    assert (pwd.status, pwd.exit_code, pwd.command) == ("ok", 0, "pwd; echo $HOME")
    assert pwd.result_summary == f"exit 0: {root} {root}"
    assert edit.edited_paths == ["d/f.txt", "made.txt", "old.txt"] and edit.kind == "shell"
    assert (fail.status, fail.exit_code, fail.result_summary) == ("error", 3, "exit 3: oops")
    assert (slow.status, slow.exit_code) == ("timeout", None)
    assert slow.ended_s is not None and slow.started_s is not None and slow.ended_s - slow.started_s < 3
    shown = [e.content for e in result.transcript if e.role == "tool"][4]
    assert (
        shown.startswith("y\ny\n")
        and "[... 49000 more characters cut]" in shown
        and shown.endswith("[exit code 0]")
    )
    assert len(loud.result_summary) <= 300 and " chars cut ...] " in loud.result_summary
    assert result.edited_paths == ["d/f.txt", "made.txt", "old.txt"]


def test_pytest_summary_lines() -> None:
    assert parse_pytest_summary("..F\n1 failed, 2 passed in 0.12s\n") == (
        {"passed": 2, "failed": 1},
        "1 failed, 2 passed in 0.12s",
    )
    assert parse_pytest_summary("==== 3 passed, 1 skipped, 2 warnings in 1.00s ====") == (
        {"passed": 3, "failed": 0, "skipped": 1, "warnings": 2},
        "3 passed, 1 skipped, 2 warnings in 1.00s",
    )
    assert parse_pytest_summary("1 error in 0.05s") == (
        {"passed": 0, "failed": 0, "errors": 1},
        "1 error in 0.05s",
    )
    assert parse_pytest_summary("== no tests ran in 0.01s ==") == (
        {"passed": 0, "failed": 0},
        "no tests ran in 0.01s",
    )
    assert parse_pytest_summary("Traceback ...\nImportError: x") == ({}, "")
