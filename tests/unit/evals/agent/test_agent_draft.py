"""`assay eval agent draft`: sessions and issues become scrubbed drafts that load as drafts; bad input is named.

The session fixtures are real Claude Code stream-json (tests/fixtures/agents/record_claude_code_gateway.py):
one on the embedded SmolLM2 through the gateway, one on a scripted model through it that calls tools.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.agents import RunSpec, get_harness
from assay.cli._main import cli
from assay.errors import ConfigError
from assay.evals.agent.draft import TODO, draft_from_issue, draft_from_session, write_draft
from assay.evals.agent.draft_session import detect_format, read_session
from assay.evals.agent.scenario_load import ScenarioWarning, load_scenario
from assay.models.scripted import ScriptedModel

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
AGENTS = FIXTURES / "agents"
REAL = AGENTS / "claude_code_session_gateway.jsonl"
TOOLS = AGENTS / "claude_code_session_tools.jsonl"
ISSUE = FIXTURES / "drafts" / "gh_issue_142.json"
#: what the sessions and the issue hold that no draft may keep (paths, e-mails, hosts, tokens)
PLANTED = (
    "/home/dev",
    "acme-app",
    "jane.doe",
    "acme-corp",
    "build01",
    "ghp_0123456789abcdefghij",
    "/home/maria",
    "maria.lopez",
    "helpdesk-staging",
    "ghp_9876543210",
)


def _leaks(text: str) -> list[str]:
    return [p for p in PLANTED if p in text]


def test_real_claude_code_session_becomes_a_scrubbed_draft_that_loads(tmp_path: Path) -> None:
    raw = REAL.read_text()
    assert "jane.doe@acme-corp.com" in raw and "/home/dev/src/acme-app" in raw and "ghp_" in raw
    path, scenario = write_draft(draft_from_session(REAL), out_dir=tmp_path / "drafts")
    text = path.read_text()
    assert path.parent == tmp_path / "drafts" / "uncategorized" and path.stem == scenario.id
    with pytest.warns(ScenarioWarning, match="'uncategorized' is not one the suite covers"):
        assert scenario.draft and load_scenario(path).draft
    assert [t.user_message for t in scenario.turns] == [
        "Call the Read tool on /home/user/project/config.ini and tell me which port the server listens on.",
        "Ops (user@example.com) told me to deploy to host.example with the token [REDACTED]. Call the Read "
        "tool on /home/user/project/deploy.md: who do I ask for deploy access?",
    ]
    assert scenario.source is not None and scenario.source.kind == "session"
    assert scenario.source.link and scenario.source.link.startswith("claude-code:claude_code_session_gateway")
    assert scenario.difficulty_rationale and scenario.difficulty_rationale.startswith(TODO)
    assert all((t.success_criteria or "").startswith(TODO) for t in scenario.turns)
    assert scenario.expected_tools == []  # the tiny model called no tool: nothing to propose
    assert _leaks(text) == [] and _leaks(scenario.id) == []


def test_tool_calls_become_expected_tool_kinds_and_read_files_the_setup(tmp_path: Path) -> None:
    session = read_session(TOOLS)
    assert [c.name for c in session.tool_record] == ["Read", "Grep", "Bash", "Read"]
    path, scenario = write_draft(
        draft_from_session(TOOLS, category="tool_choice", draft_id="cc-tools"), out_dir=tmp_path
    )
    assert scenario.expected_tools == ["kind:read", "kind:search", "kind:shell"]
    assert sorted(scenario.setup.files) == ["config.ini", "deploy.md"]  # relative to the scrubbed workdir
    assert "the session's agent answered: 'config.ini sets port 8443.'" in (
        scenario.turns[0].success_criteria or ""
    )
    assert _leaks(path.read_text()) == []
    assert path == tmp_path / "tool_choice" / "cc-tools.yaml"


def test_claude_codes_own_session_file_reads_as_its_stream() -> None:
    kept, streamed = read_session(AGENTS / "claude_code_session_file.jsonl"), read_session(TOOLS)
    assert kept.format == "claude-code" and kept.workdirs == ["/home/dev/src/acme-app"]
    assert [t.user for t in kept.turns] == [t.user for t in streamed.turns]
    assert [t.answer for t in kept.turns] == [t.answer for t in streamed.turns]
    assert [(c.name, c.kind) for c in kept.tool_record] == [(c.name, c.kind) for c in streamed.tool_record]


def test_a_rewound_branch_of_a_session_file_is_not_drafted(tmp_path: Path) -> None:
    # the user rewound: a turn that left the conversation stays in the file, off the final chain
    lines = (AGENTS / "claude_code_session_file.jsonl").read_text().splitlines()
    root = next(json.loads(line) for line in lines if json.loads(line).get("parentUuid", 1) is None)
    rewound = {**root, "uuid": "rewound-1", "parentUuid": root["uuid"], "promptId": "p-rewound"}
    rewound["message"] = {"role": "user", "content": "Delete every file in the repository."}
    at = lines.index(next(line for line in lines if root["uuid"] in line)) + 1  # after the root turn
    path = tmp_path / "rewound.jsonl"
    path.write_text("\n".join([*lines[:at], json.dumps(rewound), *lines[at:]]) + "\n")
    drafted, original = read_session(path), read_session(AGENTS / "claude_code_session_file.jsonl")
    assert [t.user for t in drafted.turns] == [t.user for t in original.turns]
    assert all("Delete every file" not in t.user for t in drafted.turns)
    # without the chain rule the rewound turn is read as a turn of its own
    from assay.agents.claude_code import parse_stream

    naive = parse_stream(path.read_text().splitlines(), tmp_path)
    assert any("Delete every file" in e.content for e in naive.transcript if e.role == "user")


def test_an_assay_agent_record_and_an_aider_history_draft(tmp_path: Path) -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"text": "one file"}])
    workdir = tmp_path / "wd"
    workdir.mkdir()
    (workdir / "a.txt").write_text("x")
    harness = get_harness("reference", model=model)
    result = asyncio.run(harness.run("Which files are here? Mail bob@corp.com", RunSpec(workdir=workdir)))
    record = tmp_path / "record.json"
    record.write_text(result.model_dump_json())
    assert detect_format(record) == "agent-record"
    _, scenario = write_draft(draft_from_session(record, draft_id="rec"), out_dir=tmp_path / "d")
    assert [t.user_message for t in scenario.turns] == ["Which files are here? Mail user@example.com"]
    assert scenario.expected_tools == ["kind:list"]
    aider = read_session(AGENTS / "aider_history.md")
    assert aider.format == "aider-history" and aider.turns[0].user == "create hello.py printing hi"
    assert [c.kind for c in aider.tool_record] == ["edit"]


def test_issue_json_becomes_turns_with_the_expected_section_as_success_criteria(tmp_path: Path) -> None:
    path, scenario = write_draft(draft_from_issue(ISSUE), out_dir=tmp_path)
    assert scenario.id == "issue-142-agent-invents-a-gift-card-refund" and scenario.draft
    assert scenario.category == "not_in_documents"  # from the label
    assert scenario.source is not None and scenario.source.kind == "issue"
    assert scenario.source.link == "https://github.com/acme/helpdesk-agent/issues/142"  # provenance kept
    messages = [t.user_message for t in scenario.turns]
    assert messages[1:] == [
        "How many days do I have to return a gift card I bought last week?",
        "Are you sure? Which document says that?",
    ]
    assert "/home/user/helpdesk/policies/refunds.md" in (messages[0] or "")
    last = scenario.turns[-1].success_criteria or ""
    assert last.startswith("The agent says the refund policy does not cover gift cards")
    assert "The issue reports instead" in last and TODO not in last
    assert scenario.difficulty_rationale and scenario.difficulty_rationale.startswith(TODO)
    assert _leaks(path.read_text()) == []


MARKDOWN = """# Build hangs when the cache folder is read-only

The agent retries forever.

**Steps to reproduce**

- Make the cache read-only:
  ```
  chmod -R a-w ~/.cache/build
  ```
- Ask "Why does my build hang?"

Expected:
The agent finds the permission error in the log and says which folder to fix.
"""


def test_issue_markdown_with_bold_headings_and_code_in_a_step(tmp_path: Path) -> None:
    issue = tmp_path / "issue.md"
    issue.write_text(MARKDOWN)
    _, scenario = write_draft(draft_from_issue(issue, category="error_recovery"), out_dir=tmp_path / "d")
    assert scenario.id == "issue-build-hangs-when-the-cache"
    first, second = scenario.turns
    assert first.user_message == "Make the cache read-only:\n```\nchmod -R a-w ~/.cache/build\n```"
    assert second.user_message == "Why does my build hang?"
    assert (
        second.success_criteria
        == "The agent finds the permission error in the log and says which folder to fix."
    )
    assert scenario.source is not None and scenario.source.link == "issue:issue.md"


@pytest.mark.parametrize(
    ("content", "line", "match"),
    [
        ('{"type":"system","subtype":"init"}\n{"type": "assistant", oops}\n', 2, "malformed JSON"),
        ('{"hello": "world"}', 1, "not a transcript"),
        ('{"type":"mystery"}\n', 1, "not a transcript this reads"),
        ("[1, 2]\n", 1, "a transcript line is a JSON object"),
    ],
)
def test_bad_session_input_names_the_file_and_line(
    tmp_path: Path, content: str, line: int, match: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(content)
    with pytest.raises(ConfigError, match=match) as err:
        read_session(path)
    assert (err.value.path, err.value.line) == (str(path), line)


def test_a_session_without_a_user_turn_is_refused_with_why(tmp_path: Path) -> None:
    # claude -p without --replay-user-messages writes no user turn (a real recording)
    with pytest.raises(ConfigError, match=r"no user turn.*--replay-user-messages") as err:
        read_session(AGENTS / "claude_code_turn1.jsonl")
    assert err.value.path == str(AGENTS / "claude_code_turn1.jsonl")
    with pytest.raises(ConfigError, match="codex exec --json does not echo"):
        read_session(AGENTS / "codex_exec.jsonl")


def test_bad_issue_input_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "title": "x",\n  "body": oops\n}')
    with pytest.raises(ConfigError, match="malformed JSON") as err:
        draft_from_issue(broken)
    assert (err.value.path, err.value.line) == (str(broken), 3)
    no_steps = tmp_path / "no_steps.json"
    no_steps.write_text(json.dumps({"title": "It breaks", "body": "It just breaks. Please fix."}))
    with pytest.raises(ConfigError, match="no reproduction steps"):
        draft_from_issue(no_steps)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"name": "not an issue"}))
    with pytest.raises(ConfigError, match="title and body"):
        draft_from_issue(wrong)


def test_cli_writes_refuses_to_overwrite_and_needs_one_source(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["eval", "agent", "draft", "--from-issue", str(ISSUE), "--out-dir", str(tmp_path)]
    first = runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "difficulty_rationale" in first.output and "promote" in first.output
    # errors surface as ConfigError (main() prints them on one line and exits 1)
    again = runner.invoke(cli, args)
    assert isinstance(again.exception, ConfigError) and "--force" in str(again.exception)
    assert runner.invoke(cli, [*args, "--force"]).exit_code == 0
    both = runner.invoke(cli, [*args, "--from-session", str(REAL)])
    assert isinstance(both.exception, ConfigError) and "one of --from-session" in str(both.exception)


def test_the_shipped_drafts_are_what_the_command_writes_from_the_fixtures(tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parents[4] / "eval" / "scenarios" / "drafts"
    made = [
        write_draft(draft_from_session(REAL, draft_id="session-server-port"), out_dir=tmp_path)[0],
        write_draft(draft_from_issue(ISSUE), out_dir=tmp_path)[0],
    ]
    for path in made:
        committed = shipped / path.relative_to(tmp_path)
        assert committed.read_text() == path.read_text(), f"regenerate {committed} (README: eval agent draft)"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ScenarioWarning)
            assert load_scenario(committed).draft


def test_a_draft_id_already_in_the_suite_is_refused(tmp_path: Path) -> None:
    taken = tmp_path / "scenarios" / "context" / "issue-142-agent-invents-a-gift-card-refund.yaml"
    taken.parent.mkdir(parents=True)
    taken.write_text("id: issue-142-agent-invents-a-gift-card-refund\n")
    with pytest.raises(ConfigError, match=f"already the id of {taken}"):
        write_draft(draft_from_issue(ISSUE), out_dir=tmp_path / "scenarios" / "drafts")
    with pytest.raises(ConfigError, match="--id 'Bad Id'"):
        write_draft(draft_from_issue(ISSUE, draft_id="Bad Id"), out_dir=tmp_path)
