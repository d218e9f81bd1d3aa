"""The agent scenario loader: every problem named by file and line; duplicates, folders, documents, drafts."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.agent.scenario_load import ScenarioWarning, load_scenario, load_scenarios

GOOD = """\
id: refund-window
category: document_qa
persona: A customer who wants a short answer.
setup:
  documents:
    - name: policy.md
user_knowledge:
  order: placed on 3 March
turns:
  - objective: Learn how many days a refund can be asked for.
    user_message: How long do I have to ask for a refund?
    ground_truth:
      document: policy.md
      facts: [30 days]
      numbers:
        - {value: 30, unit: days}
  - objective: Hear that the policy does not cover gift cards.
    user_message: And for gift cards?
    ground_truth: null
expected_tools: [query_documents]
forbidden_tools: ["kind:shell"]
tags: [numbers]
severity: high
source: {kind: hand}
difficulty_rationale: One number in a short document.
script:
  agent:
    - - tool_calls: [{name: query_documents, arguments: {query: refund window}}]
      - text: You have 30 days.
    - - text: The policy does not say anything about gift cards.
  judge:
    - verdict: PASS
      reason: fine
      turns: []
"""


def _tree(tmp_path: Path, files: dict[str, str], docs: dict[str, str] | None = None) -> Path:
    root = tmp_path / "scenarios"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "_documents").mkdir(parents=True, exist_ok=True)
    for name, text in (docs if docs is not None else {"policy.md": "Refunds: 30 days."}).items():
        (root / "_documents" / name).write_text(text)
    return root


def _error(call, *args) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        call(*args)
    return info.value


def test_a_good_scenario_loads_with_plain_mappings_and_a_digest(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": GOOD})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (s,) = load_scenarios(root)
    assert s.id == "refund-window" and s.path.endswith("refund-window.yaml") and len(s.digest) == 12
    assert s.user_knowledge == {"order": "placed on 3 March"}  # no __line__ left in a plain mapping
    assert s.script is not None
    assert s.script.agent[0][0] == {
        "tool_calls": [{"name": "query_documents", "arguments": {"query": "refund window"}}]
    }
    assert s.script.judge[0] == {"verdict": "PASS", "reason": "fine", "turns": []}
    assert s.turns[1].expects_abstention and not s.turns[0].expects_abstention
    assert s.turns[0].ground_truth is not None and s.turns[0].ground_truth.numbers[0].value == 30
    # the digest follows the documents too: a changed document is a changed scenario
    (root / "_documents" / "policy.md").write_text("Refunds: 14 days.")
    assert load_scenario(root / "document_qa" / "refund-window.yaml").digest != s.digest


def test_bad_yaml_names_its_line(tmp_path: Path) -> None:
    bad = GOOD.replace("tags: [numbers]", "tags: [numbers")
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bad})
    err = _error(load_scenarios, root)
    assert err.path is not None and err.path.endswith("refund-window.yaml")
    assert err.line is not None and 22 <= err.line <= 23
    assert "invalid YAML" in str(err)


def test_an_unknown_field_names_its_line(tmp_path: Path) -> None:
    bad = GOOD.replace(
        "    user_message: And for gift cards?\n", "    user_message: And for gift cards?\n    hint: x\n"
    )
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bad})
    err = _error(load_scenarios, root)
    assert err.line == 19 and "unknown field 'hint'" in str(err) and "turns.1.hint" in str(err)
    typo = GOOD.replace("severity: high", "severity: urgent")
    (root / "document_qa" / "refund-window.yaml").write_text(typo)
    err = _error(load_scenarios, root)
    assert err.line == 23 and "severity" in str(err)


def test_a_turn_without_grading_is_refused_at_the_turn(tmp_path: Path) -> None:
    bad = GOOD.replace("    ground_truth: null\n", "")
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bad})
    err = _error(load_scenarios, root)
    assert err.line == 17 and "ground_truth" in str(err) and "success_criteria" in str(err)


def test_duplicate_ids_are_refused_naming_both_files(tmp_path: Path) -> None:
    other = GOOD.replace("category: document_qa", "category: context")
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": GOOD, "context/refund-window.yaml": other})
    err = _error(load_scenarios, root)
    assert "context/refund-window.yaml" in str(err) and "document_qa/refund-window.yaml" in str(err)
    assert "also used by" in str(err)


def test_the_category_must_be_the_folder(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"context/refund-window.yaml": GOOD})
    err = _error(load_scenarios, root)
    assert err.line == 2 and "'document_qa' is not the folder" in str(err) and "'context'" in str(err)


def test_the_id_must_be_the_file_name(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"document_qa/other-name.yaml": GOOD})
    err = _error(load_scenarios, root)
    assert err.line == 1 and "file name" in str(err)


def test_a_missing_document_is_refused_at_its_entry(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": GOOD}, docs={})
    err = _error(load_scenarios, root)
    assert err.line == 6 and "'policy.md' not found" in str(err)
    escaping = GOOD.replace("- name: policy.md", "- name: ../secret.md")
    (root / "document_qa" / "refund-window.yaml").write_text(escaping)
    assert "no '..'" in str(_error(load_scenarios, root))


def test_an_inline_document_needs_no_file(tmp_path: Path) -> None:
    inline = GOOD.replace(
        "    - name: policy.md\n", "    - name: policy.md\n      text: 'Refunds: 30 days.'\n"
    )
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": inline}, docs={})
    (s,) = load_scenarios(root)
    assert s.setup.documents[0].text == "Refunds: 30 days."


def test_ground_truth_must_name_an_indexed_document(tmp_path: Path) -> None:
    bad = GOOD.replace("      document: policy.md", "      document: prices.md")
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bad})
    err = _error(load_scenarios, root)
    assert err.line == 13 and "'prices.md' is not in setup.documents (policy.md)" in str(err)


def test_the_agent_script_needs_one_list_per_turn_ending_in_an_answer(tmp_path: Path) -> None:
    one_list = GOOD.replace("    - - text: The policy does not say anything about gift cards.\n", "")
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": one_list})
    err = _error(load_scenarios, root)
    assert err.line == 27 and "1 list(s) of replies; the scenario has 2 turn(s)" in str(err)
    no_answer = GOOD.replace("      - text: You have 30 days.\n", "")
    (root / "document_qa" / "refund-window.yaml").write_text(no_answer)
    err = _error(load_scenarios, root)
    assert err.line == 28 and "end the turn with a text answer" in str(err)
    bad_reply = GOOD.replace("      - text: You have 30 days.", "      - txt: You have 30 days.")
    (root / "document_qa" / "refund-window.yaml").write_text(bad_reply)
    err = _error(load_scenarios, root)
    assert err.line == 29 and "script.agent[0][1].txt" in str(err)
    unknown_tool = GOOD.replace("name: query_documents,", "name: search_docs,")
    (root / "document_qa" / "refund-window.yaml").write_text(unknown_tool)
    err = _error(load_scenarios, root)
    assert err.line == 28 and "'search_docs' is not a reference agent tool" in str(err)


def test_a_tool_kind_must_exist(tmp_path: Path) -> None:
    bad = GOOD.replace('["kind:shell"]', '["kind:sh"]')
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bad})
    err = _error(load_scenarios, root)
    assert err.line == 21 and "'kind:sh' names no tool kind" in str(err)


def test_a_scenario_without_source_warns_naming_the_file(tmp_path: Path) -> None:
    bare = GOOD.replace("source: {kind: hand}\n", "")
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bare})
    with pytest.warns(ScenarioWarning, match=r"refund-window\.yaml: a non-draft scenario without source"):
        (s,) = load_scenarios(root)
    assert s.source is None
    # a draft may lack them, silently
    (root / "document_qa" / "refund-window.yaml").write_text(bare + "draft: true\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (s,) = load_scenarios(root, include_drafts=True)
    assert s.draft


def test_drafts_and_documents_are_skipped_unless_asked(tmp_path: Path) -> None:
    draft_flag = GOOD.replace("id: refund-window", "id: flagged").replace("severity: high", "draft: true")
    in_drafts = GOOD.replace("id: refund-window", "id: parked")
    root = _tree(
        tmp_path,
        {
            "document_qa/refund-window.yaml": GOOD,
            "document_qa/flagged.yaml": draft_flag,
            "drafts/document_qa/parked.yaml": in_drafts,
            "document_qa/notes.txt": "not a scenario",
        },
    )
    (root / "_documents" / "looks-like.yaml").write_text("id: nope\n")
    assert [s.id for s in load_scenarios(root)] == ["refund-window"]
    everything = load_scenarios(root, include_drafts=True)
    assert sorted(s.id for s in everything) == ["flagged", "parked", "refund-window"]
    assert all(s.draft for s in everything if s.id != "refund-window")


def test_a_folder_without_scenarios_and_stray_files_are_refused(tmp_path: Path) -> None:
    assert "not found" in str(_error(load_scenarios, tmp_path / "nowhere"))
    root = _tree(tmp_path, {})
    assert "no <category>/*.yaml" in str(_error(load_scenarios, root))
    (root / "loose.yaml").write_text(GOOD)
    assert "belongs in a category folder" in str(_error(load_scenarios, root))
    (root / "loose.yaml").unlink()
    (root / "document_qa").mkdir()
    (root / "document_qa" / "refund-window.yml").write_text(GOOD)
    assert "end in .yaml" in str(_error(load_scenarios, root))


def test_a_top_level_list_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": "- a\n- b\n"})
    err = _error(load_scenarios, root)
    assert err.line == 1 and "mapping" in str(err)


def test_a_category_the_suite_does_not_cover_warns_but_loads(tmp_path: Path) -> None:
    other = GOOD.replace("category: document_qa", "category: billing_disputes")
    root = _tree(tmp_path, {"billing_disputes/refund-window.yaml": other})
    with pytest.warns(ScenarioWarning, match="'billing_disputes' is not one the suite covers"):
        (s,) = load_scenarios(root)
    assert s.category == "billing_disputes"


def test_the_simulator_script_needs_one_list_per_turn(tmp_path: Path) -> None:
    bad = GOOD.replace("  judge:\n", '  simulator:\n    - ["<<NEXT>>"]\n  judge:\n')
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": bad})
    err = _error(load_scenarios, root)
    assert err.line == 31 and "script.simulator has 1 list(s); the scenario has 2 turn(s)" in str(err)


def test_end_state_paths_are_checked_at_their_line(tmp_path: Path) -> None:
    with_files = GOOD.replace("setup:\n", "setup:\n  files:\n    notes.md: hello\n")
    good = with_files.replace(
        "tags: [numbers]\n",
        "end_state:\n  file_unchanged: [notes.md]\n  file_contains:\n    - {path: out/a.txt, text: done}\n"
        "  tests_pass: [-k, smoke]\ntags: [numbers]\n",
    )
    root = _tree(tmp_path, {"document_qa/refund-window.yaml": good})
    (s,) = load_scenarios(root)
    assert s.end_state.file_unchanged == ["notes.md"] and s.end_state.tests_pass == ["-k", "smoke"]
    not_setup = good.replace("file_unchanged: [notes.md]", "file_unchanged: [other.md]")
    (root / "document_qa" / "refund-window.yaml").write_text(not_setup)
    err = _error(load_scenarios, root)
    assert (
        err.line == 25
        and "end_state.file_unchanged: 'other.md' is not one of setup.files (notes.md)" in str(err)
    )
    outside = good.replace("path: out/a.txt", "path: ../a.txt")
    (root / "document_qa" / "refund-window.yaml").write_text(outside)
    err = _error(load_scenarios, root)
    assert (
        err.line == 27
        and "end_state.file_contains[0]: '../a.txt' must be a path inside the workdir" in str(err)
    )
