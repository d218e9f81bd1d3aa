"""A tool call's result summary keeps the head and the tail of a long output within its cap: the verdict of a
command is often its last line (pytest's "1 failed, 3 passed"), which a head-only cut lost."""

from __future__ import annotations

from assay.agents._cliproc import summarize


def test_short_text_is_kept_whole() -> None:
    assert summarize("  exit 0: ok \n") == "exit 0: ok"


def test_long_output_keeps_its_last_line_within_the_cap() -> None:
    out = "exit 1: " + "tests/test_x.py::test_a PASSED\n" * 200 + "===== 1 failed, 199 passed in 0.52s ====="
    summary = summarize(out, 300)
    assert len(summary) <= 300
    assert summary.startswith("exit 1: tests/test_x.py")
    assert summary.endswith("1 failed, 199 passed in 0.52s =====")
    cut = int(summary.split("[... ")[1].split(" chars cut")[0])
    assert cut == len(out) - (len(summary) - len(f" [... {cut} chars cut ...] "))


def test_a_tiny_cap_still_marks_the_cut() -> None:
    summary = summarize("x" * 100, 5)
    assert "chars cut" in summary and "x" * 10 not in summary
