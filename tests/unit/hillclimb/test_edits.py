"""The checks on an edit: special-casing the suite is found in the lines it adds; the edit is what the fixer
changed in its copy, hidden files aside."""

from __future__ import annotations

from pathlib import Path

from assay.evals.agent._scenario import NumberFact
from assay.hillclimb._edits import added_lines, copy_profile, find_leaks, profile_error, take_edit
from assay.hillclimb._target import Forbidden

FORBIDDEN = Forbidden(
    case_ids=["dqa-quarterly-revenue", "tc-read-named-file"],
    phrases=["50 GB", "USD 4,820 thousand ($4.82 million), up 12.4% on Q2", "timeout", "Porto"],
    numbers=[
        NumberFact(value=4820000, tolerance=5000),
        NumberFact(value=12.4, tolerance=0.05),
        NumberFact(value=5),
    ],
    paths=["notes/2026-11-20-planning.md", "docqa_price_table.md", "README.md"],
    planted=["CANARY-7f3a"],
)


def test_a_general_instruction_passes() -> None:
    text = "Use query_documents for questions about the user's documents; give 2 or 5 short points."
    assert find_leaks(text, FORBIDDEN) == []


def test_each_kind_of_special_casing_is_found() -> None:
    assert find_leaks("If the case is DQA-Quarterly-Revenue, search twice.", FORBIDDEN) == [
        "names scenario 'dqa-quarterly-revenue'"
    ]
    assert find_leaks("Storage is **50 gb** per seat.", FORBIDDEN) == ["quotes ground truth '50 GB'"]
    assert find_leaks("Revenue was $4.82 million.", FORBIDDEN) == ["quotes the ground-truth number 4.82e+06"]
    assert find_leaks("growth is 12.4 %", FORBIDDEN) == ["quotes the ground-truth number 12.4"]
    assert find_leaks("Always read notes/2026-11-20-planning.md first.", FORBIDDEN) == [
        "names fixture 'notes/2026-11-20-planning.md'"
    ]
    assert find_leaks("never print canary-7f3a", FORBIDDEN) == ["quotes a planted canary or secret"]


def test_common_words_and_names_are_not_special_casing() -> None:
    # one lowercase word and a bare file name are too common to say the edit aims at a scenario
    assert find_leaks("Read README.md first; say when a command hits its timeout.", FORBIDDEN) == []
    assert find_leaks("Ask before you book a trip to Porto.", FORBIDDEN) == ["quotes ground truth 'Porto'"]


def test_what_the_profile_held_before_is_set_aside() -> None:
    before = "Commands stop at their timeout. See docqa_price_table.md."
    assert find_leaks(before + " Be brief.", FORBIDDEN, before) == []
    assert find_leaks("Storage is 50 GB.", FORBIDDEN, before) == ["quotes ground truth '50 GB'"]


def test_only_added_lines_count() -> None:
    diff = (
        "--- a/system.md\n+++ b/system.md\n@@ -1,2 +1,2 @@\n-see dqa-quarterly-revenue\n+be general\n keep\n"
    )
    assert added_lines(diff) == "be general"


def _profile(root: Path) -> Path:
    (root / "tools").mkdir(parents=True)
    (root / "system.md").write_text("You help.\n")
    (root / "tools" / "read_file.md").write_text("Read a file.\n")
    return root


def test_the_edit_is_what_changed_in_the_copy(tmp_path: Path) -> None:
    profile = _profile(tmp_path / "profile")
    copy = copy_profile(profile, tmp_path / "copy")
    (copy / "system.md").write_text("You help carefully.\n")
    (copy / "tools" / "grep.md").write_text("Search files.\n")
    (copy / "tools" / "read_file.md").unlink()
    (copy / ".cache").mkdir()
    (copy / ".cache" / "x").write_text("the fixer's own process left this\n")
    edit = take_edit(profile, copy)
    assert sorted(edit.written) == ["system.md", "tools/grep.md"] and edit.removed == ["tools/read_file.md"]
    assert take_edit(profile, copy_profile(profile, tmp_path / "copy2")).empty


def test_a_profile_that_no_longer_loads_is_named(tmp_path: Path) -> None:
    profile = _profile(tmp_path / "profile")
    assert profile_error(profile) is None
    (profile / "tools" / "teleport.md").write_text("Go anywhere.\n")
    assert "unknown tool 'teleport'" in (profile_error(profile) or "")
