"""`assay agent run|chat` as a user runs them (a real subprocess) on a scripted model."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

EDIT_SCRIPT = """\
- tool_calls: [{name: read_file, arguments: {path: calc.py}}]
- tool_calls: [{name: edit_file, arguments: {path: calc.py, old: "a - b", new: "a + b"}}]
- tool_calls: [{name: run_tests, arguments: {}}]
- text: "Fixed add(); the test passes."
  usage: {input_tokens: 120, output_tokens: 9}
"""


def _assay(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "assay", *args]
    env = {"COLUMNS": "160", "PATH": "/usr/bin:/bin", "HOME": str(cwd or Path.cwd())}
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60, env=env, cwd=cwd)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    return work


def test_agent_run_prints_answer_record_and_usage(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "edit.yaml"
    script.write_text(EDIT_SCRIPT)
    saved = tmp_path / "record.json"
    done = _assay(
        "agent",
        "run",
        "Fix add",
        "--workdir",
        str(project),
        "--model",
        f"scripted/{script}",
        "--save",
        str(saved),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Fixed add(); the test passes."
    assert lines[1] == "tool calls (3)"
    rows = [line for line in lines if line.startswith("│")]
    assert [r.split("│")[2].strip() for r in rows] == ["read_file", "edit_file", "run_tests"]
    assert "calc.py" in rows[1].split("│")[6] and "[exit 0]  [1 passed, 0 failed]" in rows[2]
    assert lines[-1].startswith("steps 4 · tokens in=")
    assert " out=" in lines[-1] and "cost $0.000000 (harness_counts)" in lines[-1]
    assert f"model {script}" in lines[-1]
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    record = json.loads(saved.read_text())
    assert record["harness"] == "reference" and [c["name"] for c in record["tool_record"]] == [
        "read_file",
        "edit_file",
        "run_tests",
    ]
    assert record["tool_record"][1]["edited_paths"] == ["calc.py"]


def test_agent_run_cut_off_by_the_step_cap(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "loop.yaml"
    script.write_text("replies:\n  - tool_calls: [{name: list_files, arguments: {}}]\nloop: true\n")
    done = _assay(
        "agent", "run", "x", "--workdir", str(project), "--model", f"scripted/{script}", "--max-steps", "2"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("(no answer)\ntool calls (2)\n")
    assert "cut off by the step cap (--max-steps)" in done.stdout


def test_agent_run_outage_exits_3(project: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _assay(
        "agent",
        "run",
        "x",
        "--workdir",
        str(project),
        "--model",
        f"openai-compat/m@http://127.0.0.1:{port}/v1",
    )
    assert done.returncode == 3
    assert "infrastructure error (not the agent's fault): openai-compat: cannot connect" in done.stderr


def test_agent_run_bad_input_names_the_flag(project: Path, tmp_path: Path) -> None:
    missing = _assay("agent", "run", "x", "--workdir", str(tmp_path / "nope"), "--model", "scripted/x.yaml")
    assert missing.returncode == 1 and "--workdir" in missing.stderr and "does not exist" in missing.stderr
    no_model = _assay("agent", "run", "x", "--workdir", str(project))
    assert no_model.returncode == 1 and "no model (pass --model provider/model" in no_model.stderr
    unknown = _assay("agent", "run", "x", "--workdir", str(project), "--harness", "nonesuch")
    assert unknown.returncode == 1 and "--harness 'nonesuch': unknown harness (known: " in unknown.stderr
    assert "reference" in unknown.stderr
    bad_profile = tmp_path / "profile"
    (bad_profile / "tools").mkdir(parents=True)
    (bad_profile / "system.md").write_text("hi")
    (bad_profile / "tools" / "fly.md").write_text("Fly.")
    profiled = _assay(
        "agent",
        "run",
        "x",
        "--workdir",
        str(project),
        "--model",
        "scripted/x.yaml",
        "--profile",
        str(bad_profile),
    )
    assert (
        profiled.returncode == 1
        and f"{bad_profile / 'tools' / 'fly.md'}: unknown tool 'fly'" in profiled.stderr
    )
    assert "Traceback" not in profiled.stderr + unknown.stderr + no_model.stderr


def test_agent_chat_keeps_one_conversation(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "chat.yaml"
    script.write_text(
        "- text: Hello, I can see calc.py.\n"
        "- tool_calls: [{name: read_file, arguments: {path: calc.py}}]\n"
        "- text: It subtracts.\n"
    )
    done = _assay(
        "agent",
        "chat",
        "--workdir",
        str(project),
        "--model",
        f"scripted/{script}",
        stdin="hi\n\nwhat does add do?\n",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "agent> Hello, I can see calc.py."
    assert lines[1].startswith("  [no tool calls] steps 1 · tokens in=")
    assert lines[2] == "agent> It subtracts."
    assert lines[3].startswith("  [read_file:ok] steps 2 · tokens in=")
    assert len(lines) == 4


def _cat_outside(path: Path) -> str:
    """``cat PATH`` with PATH spelled in octal escapes: no '/' in the text, so the best-effort shell check lets
    it through and only the fence stands between the command and the file."""
    return "cat \"$(printf '" + str(path).replace("/", "\\057") + "')\""


def test_agent_run_fence_keeps_a_planted_file_out_of_reach(project: Path, tmp_path: Path) -> None:
    planted = tmp_path / "planted.txt"  # outside the workdir (tmp_path/work)
    planted.write_text("the planted secret 7f3a\n")
    script = tmp_path / "cat.yaml"
    script.write_text(
        f"- tool_calls: [{{name: run_shell, arguments: {{command: {json.dumps(_cat_outside(planted))}}}}}]\n"
        "- text: done\n"
    )
    records = {}
    for fence in (False, True):
        saved = tmp_path / f"record-{fence}.json"
        args = ["agent", "run", "read it", "--workdir", str(project), "--model", f"scripted/{script}"]
        done = _assay(*args, "--fence" if fence else "--no-fence", "--save", str(saved))  # on by default
        assert done.returncode == 0, done.stderr
        records[fence] = json.loads(saved.read_text())
    # without the fence the command does reach the file: the check above cannot pass by accident
    [open_call] = records[False]["tool_record"]
    assert open_call["status"] == "ok" and open_call["exit_code"] == 0
    assert "the planted secret 7f3a" in open_call["result_summary"]
    [fenced_call] = records[True]["tool_record"]
    assert fenced_call["status"] == "error" and fenced_call["exit_code"] not in (0, None)
    assert "No such file or directory" in fenced_call["result_summary"]
    assert "7f3a" not in json.dumps(records[True])
    # chat takes the flag too: the same refusal of the planted file, turn by turn
    done = _assay(
        "agent", "chat", "--workdir", str(project), "--model", f"scripted/{script}", "--fence", stdin="go\n"
    )
    assert done.returncode == 0, done.stderr
    assert "[run_shell:error]" in done.stdout and "7f3a" not in done.stdout


def test_agent_fence_refused_where_bubblewrap_cannot_run(project: Path, tmp_path: Path) -> None:
    no_bwrap = tmp_path / "bin"  # a PATH without bwrap on it
    no_bwrap.mkdir()
    env = {"PATH": str(no_bwrap), "HOME": str(tmp_path)}
    for args in (
        ["run", "hi", "--workdir", str(project), "--model", "scripted/x.yaml", "--fence"],
        ["chat", "--workdir", str(project), "--model", "scripted/x.yaml", "--fence"],
        ["serve", "--port", "8799", "--fence"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "assay", "agent", *args],
            input="",
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        assert done.returncode == 1 and done.stdout == "", (args, done.stdout)
        assert done.stderr.splitlines() == [
            "error: --fence: bubblewrap is not installed (no bwrap on PATH; Debian/Ubuntu: apt-get install bubblewrap)"
        ]


def test_memory_carries_a_fact_from_one_run_to_the_next(project: Path, tmp_path: Path) -> None:
    """`--memory FILE`: the reference agent's memory tools on a store that outlives the run."""
    store = tmp_path / "agent-memory.db"
    first = tmp_path / "remember.yaml"
    first.write_text(
        "- tool_calls: [{name: remember, arguments: {content: 'My favourite colour is teal.',"
        " attribute: favourite colour}}]\n- text: Noted.\n"
    )
    later = tmp_path / "recall.yaml"
    later.write_text(
        "- tool_calls: [{name: recall_memory, arguments: {query: favourite colour}}]\n- text: Teal.\n"
    )
    prompt = "My favourite colour is teal. Please remember that."
    one = _assay("agent", "run", prompt, "--workdir", str(project), "--model", f"scripted/{first}",
                 "--memory", str(store))  # fmt: skip
    assert one.returncode == 0, one.stderr
    assert store.is_file() and "remember" in one.stdout
    two = _assay("agent", "run", "What is my favourite colour?", "--workdir", str(project),
                 "--model", f"scripted/{later}", "--memory", str(store), "--save", str(tmp_path / "r.json"))  # fmt: skip
    assert two.returncode == 0, two.stderr
    record = json.loads((tmp_path / "r.json").read_text())["tool_record"]
    assert [(c["name"], c["kind"], c["status"]) for c in record] == [("recall_memory", "memory", "ok")]
    assert "My favourite colour is teal." in record[0]["result_summary"]
    refused = _assay("agent", "run", "x", "--workdir", str(project), "--harness", "python:os:getcwd",
                     "--memory", str(store))  # fmt: skip
    assert refused.returncode != 0 and "--memory is an option of the reference harness" in refused.stderr
