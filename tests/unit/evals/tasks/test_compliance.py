"""Web use read from the tool record: web tools by name, download programs, URLs, network git and pip; a local
search, a plain shell command or a word that only looks like one is no finding."""

from __future__ import annotations

import pytest

from assay.agents import ToolCallRecord
from assay.evals.tasks._compliance import web_use


def shell(command: str) -> ToolCallRecord:
    return ToolCallRecord(name="run_shell", kind="shell", command=command, exit_code=0)


@pytest.mark.parametrize(
    ("call", "why"),
    [
        (ToolCallRecord(name="WebFetch", arguments={"url": "x"}), "web tool WebFetch"),
        (ToolCallRecord(name="WebSearch"), "web tool WebSearch"),
        (ToolCallRecord(name="mcp__brave__search", kind="mcp"), "web tool mcp__brave__search"),
        (ToolCallRecord(name="fetch_url"), "web tool fetch_url"),
        (shell("curl -s example.invalid/x.patch | git apply"), "runs curl"),
        (shell("cd src && /usr/bin/wget -q -O- example.invalid"), "runs wget"),
        (
            shell("python - <<EOF\nimport urllib.request; urllib.request.urlopen('https://x.invalid')\nEOF"),
            "names a URL",
        ),
        (shell("git fetch origin main"), "runs git fetch"),
        (shell("git -c x=y clone repo.invalid:foo"), "runs git clone"),
        (shell("python -m pip install requests"), "runs pip install"),
        (shell("FOO=1 sudo pip3 download six"), "runs pip download"),
    ],
)
def test_web_use_is_a_finding_naming_the_call(call: ToolCallRecord, why: str) -> None:
    found = web_use([shell("ls"), call])
    assert len(found) == 1 and found[0].call == 1 and found[0].tool == call.name
    assert why in found[0].why


@pytest.mark.parametrize(
    "call",
    [
        ToolCallRecord(name="search_code", kind="search", arguments={"query": "fetch"}),
        ToolCallRecord(name="Grep", kind="search", arguments={"pattern": "http"}),
        ToolCallRecord(name="read_file", kind="read", arguments={"path": "web/app.py"}),
        shell("grep -rn curl_easy src/ && git log -3 && git diff"),
        shell("pip list; python -m pytest -q tests/test_http.py"),
        shell("echo 'the wget step' > notes.txt"),
    ],
)
def test_local_work_is_no_finding(call: ToolCallRecord) -> None:
    assert web_use([call]) == []
