"""Long sessions read whole: a compaction whose logical parent is not in the file continues the chain from the
tip before it (as Claude Code writes long sessions), and requests lost where a chain really breaks are counted
apart from rewound branches. The sessions here are the recorded ``interrupted`` session (a real Claude Code
file with a real ``/compact``, see tests/fixtures/sessions/record_sessions.py) with one field changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.agents import final_chain
from assay.evals.sessions._dataset import explain
from assay.evals.sessions._extract import extract
from assay.evals.sessions._records import read_session_file

RECORDED = (
    Path(__file__).resolve().parents[4]
    / "tests/fixtures/sessions/claude/projects/-home-dev-src-acme-app/94c722fa-8148-4656-9762-b450ccc81c81.jsonl"
)
ABSENT = "5a1c0ffe-0000-4000-8000-000000000000"
PROMPTS = [
    "Never mind that. What is the default port in server.py?",
    "What does parse_host return for ' example.com '?",
    "And which function reads it?",
]


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _boundary(records: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [r for r in records if r.get("subtype") == "compact_boundary"]
    return found


def test_the_recorded_compaction_links_its_logical_parent() -> None:
    records = _records()
    boundary = _boundary(records)
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] in {
        r.get("uuid") for r in records
    }
    found = extract(read_session_file(RECORDED))
    assert [k.prompt for k in found.kept] == PROMPTS


def test_a_compaction_whose_logical_parent_is_absent_continues_from_the_tip_before_it(tmp_path: Path) -> None:
    records = _records()
    tip = _boundary(records)["logicalParentUuid"]
    _boundary(records)["logicalParentUuid"] = ABSENT  # the record it names was never written to the file
    chain, skipped = final_chain(records)
    uuids = [r["uuid"] for r in chain]
    assert uuids.index(tip) + 1 == uuids.index(_boundary(records)["uuid"])  # continued from the tip
    assert len(chain) == sum(bool(r.get("uuid")) for r in records)  # every record is on the chain
    assert not [why for why in skipped if "final chain" in why or why.startswith("requests ")]
    found = extract(read_session_file(_write(tmp_path / "s.jsonl", records)))
    assert [k.prompt for k in found.kept] == PROMPTS  # the requests before the compaction are kept
    assert found.kept[2].follow_up  # and the one after it is still the follow-up it is


def test_a_broken_chain_is_counted_apart_from_a_rewound_branch(tmp_path: Path) -> None:
    records = _records()
    by_text = {
        r["message"]["content"]: r
        for r in records
        if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    }
    # the third question names a parent the file lacks: everything before it is lost, two requests with it
    by_text[PROMPTS[1]]["parentUuid"] = ABSENT
    # and the user edited the last question once: the first version is a rewound branch
    last = by_text[PROMPTS[2]]
    edited = {
        **last,
        "uuid": "e0000000-0000-4000-8000-000000000001",
        "message": {"role": "user", "content": "Which file?"},
    }
    records.insert(records.index(last), edited)
    chain, skipped = final_chain(records)
    assert chain[0] is by_text[PROMPTS[1]]  # the chain starts where it breaks
    assert skipped["off the final chain (lost: the chain breaks at a parent that is not in the file)"] == 4
    assert skipped["requests lost to a broken chain"] == 2  # "Rewrite client.py ..." and PROMPTS[0]
    assert skipped["off the final chain (a rewound or edited branch)"] == 1
    assert skipped["requests on a rewound or edited branch"] == 1
    session = read_session_file(_write(tmp_path / "s.jsonl", records))
    text = explain([extract(session)])
    assert "lost    2 user request(s): requests lost to a broken chain" in text
    assert "off     1 user request(s): requests on a rewound or edited branch" in text
