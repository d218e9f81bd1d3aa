"""How a comparison reads: names never cut off a terminal, and no verdict word on a metric that is not gated."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from assay.gate import compare, comparison_markdown, print_comparison
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.runs.records import MetricSpec

LONG_CASE = "hard/prompt-injection-in-a-quoted-footnote"
SPECS = [
    MetricSpec(
        name="retrieval/labelled/recall_at_5_gated", kind="proportion", direction="higher", tolerance=0.02
    ),
    MetricSpec(name="index/labelled/chunks_written_total", kind="count", direction="higher", gated=False),
    MetricSpec(
        name="index/labelled/seconds_to_build", kind="continuous", direction="lower", gated=False, unit="s"
    ),
]
QS = [f"q{i}" for i in range(40)]


def _run(recall: float, chunks: float, seconds: float, run_id: str, long_case: str = "PPP"):
    outcomes = {q: "PPP" for q in QS} | {LONG_CASE: long_case}
    row = {"retrieval/labelled/recall_at_5_gated": recall, "index/labelled/chunks_written_total": chunks,
           "index/labelled/seconds_to_build": seconds}  # fmt: skip
    return card(outcomes, run_id=run_id, metrics={q: [row] * 3 for q in outcomes}, metric_specs=SPECS)


def _text(comp, width: int, terminal: bool) -> str:
    buf = io.StringIO()
    print_comparison(comp, Console(file=buf, width=width, color_system=None, force_terminal=terminal))
    return buf.getvalue()


def test_off_a_terminal_at_80_columns_every_name_is_whole() -> None:
    comp = compare(_run(0.9, 42, 0.33, "base"), _run(0.9, 41, 2.06, "cur", long_case="FFF"))
    out = _text(comp, 80, terminal=False)
    assert "…" not in out
    for name in [s.name for s in SPECS] + [LONG_CASE]:
        assert name in out, name
    # one metric per line, its name first
    lines = {ln.split(":")[0].strip(): ln for ln in out.splitlines() if ln.startswith("  ")}
    assert lines["index/labelled/chunks_written_total (not gated)"].endswith(": changed")
    assert lines["index/labelled/seconds_to_build (not gated)"].endswith(": slower")
    assert lines["retrieval/labelled/recall_at_5_gated"].endswith(": ok")


def test_a_table_is_kept_where_it_fits_with_names_whole() -> None:
    comp = compare(_run(0.9, 42, 0.33, "base"), _run(0.9, 41, 2.06, "cur"))
    out = _text(comp, 220, terminal=True)
    rows = [ln for ln in out.splitlines() if ln.startswith("│")]
    assert any("index/labelled/seconds_to_build (not gated)" in r and "slower" in r for r in rows)
    # the same table on an 80-column terminal would cut the names: one metric per line there too
    narrow = _text(comp, 80, terminal=True)
    assert "…" not in narrow and "index/labelled/chunks_written_total (not gated)" in narrow


def test_a_metric_not_gated_never_reads_as_a_regression() -> None:
    comp = compare(_run(0.9, 42, 0.33, "base"), _run(0.9, 41, 2.06, "cur"))
    by = {m.name: m for m in comp.metrics}
    assert (
        by["index/labelled/chunks_written_total"].verdict == "regressed"
    )  # the record keeps the rule's word
    assert by["index/labelled/chunks_written_total"].label == "changed"
    assert by["index/labelled/seconds_to_build"].label == "slower"
    assert comp.exit_code == 0 and comp.verdict == "no regression"
    for text in (_text(comp, 80, False), _text(comp, 220, True), comparison_markdown(comp)):
        rows = [ln for ln in text.splitlines() if "(not gated)" in ln]
        assert len(rows) == 2 and not any("regress" in r for r in rows), text
    faster = compare(_run(0.9, 42, 2.06, "base"), _run(0.9, 42, 0.33, "cur"))
    assert {m.name: m.label for m in faster.metrics}["index/labelled/seconds_to_build"] == "faster"
    same = compare(_run(0.9, 42, 0.33, "base"), _run(0.9, 42, 0.33, "cur"))
    assert {m.name: m.label for m in same.metrics}["index/labelled/chunks_written_total"] == "not gated"


def test_a_gated_regression_still_says_regressed() -> None:
    comp = compare(_run(0.9, 42, 0.33, "base"), _run(0.5, 42, 0.33, "cur"))
    assert comp.exit_code == 2
    for text in (_text(comp, 80, False), _text(comp, 220, True)):
        line = next(ln for ln in text.splitlines() if "retrieval/labelled/recall_at_5_gated" in ln)
        assert "regressed" in line
        assert text.splitlines()[-1].startswith(
            "REGRESSION: 1 regressed: metric:retrieval/labelled/recall_at"
        )


def test_assay_compare_into_a_pipe_keeps_names_whole(tmp_path: Path) -> None:
    for name, sc in (("base", _run(0.9, 42, 0.33, "base")), ("cur", _run(0.9, 41, 2.06, "cur", "FFF"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")}
    res = subprocess.run(
        [sys.executable, "-m", "assay", "compare", str(tmp_path / "base"), str(tmp_path / "cur")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr  # the long-named case regressed
    assert "  regressed hard/prompt-injection-in-a-quoted-footnote: 3/3 -> 0/3" in res.stdout
    assert "…" not in res.stdout
    for name in [s.name for s in SPECS] + [LONG_CASE]:
        assert name in res.stdout, res.stdout
    assert "index/labelled/seconds_to_build (not gated): 0.33 s -> 2.06 s" in res.stdout
