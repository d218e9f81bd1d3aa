"""`assay eval tasks report`: the harness x model table of several runs as markdown, HTML and a PNG that
headless Chromium renders (Debian's chromium is installed where this runs; without it, a clear error)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from tasks_fixtures import agent_script, grades, run_tasks, write_script, write_tasks_dir

from assay.cli._tasks import tasks_report_command
from assay.evals.tasks._report import CHROMIUM_INSTALL, find_chromium


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Model a on core and adversarial, model b on core (the question task only: no pytest to wait for)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASSAY_NO_LOCK", "1")
        tmp = tmp_path_factory.mktemp("report")
        tasks_dir = write_tasks_dir(tmp)
        out = []
        for name, suite, grade in (("a", "core", 4), ("a", "adversarial", 2), ("b", "core", 5)):
            agent = write_script(tmp / f"{name}.yaml", agent_script(fix=False)[1:])
            judge = write_script(tmp / f"judge-{name}-{suite}.yaml", [_grade_explain(grade)])
            code, text, run_dir = run_tasks(
                tmp, tasks_dir, agent, judge, "--suite", suite, "--tasks", "explain"
            )
            assert code == 0 and run_dir is not None, text
            out.append(run_dir)
    return out


def _grade_explain(score: int) -> dict:
    import json

    full = json.loads(grades(fix_add=score, explain=score)["text"])
    return {"text": json.dumps({"tasks": [t for t in full["tasks"] if t["task"] == "explain"]})}


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_report_writes_the_table_as_markdown_html_and_png(runs: list[Path], tmp_path: Path) -> None:
    assert find_chromium() is not None, f"this machine has Debian's chromium ({CHROMIUM_INSTALL})"
    out = tmp_path / "report"
    result = CliRunner().invoke(
        tasks_report_command, [*map(str, runs), "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    md = (out / "tasks.md").read_text()
    rows = [ln for ln in md.splitlines() if ln.startswith("| reference |")]
    assert len(rows) == 2  # one row per harness x model
    assert "core passed" in md and "adversarial passed" in md
    assert "Weak model" not in md  # scripted models: no weak-model note (the embedded model gets one)
    a_row = next(r for r in rows if "a.yaml" in r)
    b_row = next(r for r in rows if "b.yaml" in r)
    assert md.index("adversarial passed") < md.index("core passed")  # one column per suite, by name
    assert "| 0/1 | 1/1 |" in a_row  # graded 2 on adversarial (fails), 4 on core (passes)
    assert "| - | 1/1 |" in b_row  # model b ran core only
    assert "| misreported |" in md and "| 0 | 0/1 | 5.00 |" in b_row  # one answer read, not misreporting
    html = (out / "tasks.html").read_text()
    assert html.count("<tr>") == 3 and "a.yaml" in html
    width, height = _png_size(out / "tasks.png")
    assert width > 400 and height > 100


def test_a_second_run_of_one_cell_is_refused(runs: list[Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(
        tasks_report_command, [str(runs[0]), str(runs[0]), "--out", str(tmp_path / "r")]
    )
    assert "a second core run" in str(result.exception)


def test_missing_chromium_names_the_install_command(
    runs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("ASSAY_CHROMIUM", raising=False)
    assert shutil.which("chromium") is None
    result = CliRunner().invoke(tasks_report_command, [str(runs[0]), "--out", str(tmp_path / "r")])
    assert CHROMIUM_INSTALL in str(result.exception) and not (tmp_path / "r").exists()


def test_report_needs_out_naming_the_variable(runs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_REPORT_OUT", raising=False)
    result = CliRunner().invoke(tasks_report_command, [str(runs[0])])
    assert "--out" in str(result.exception) and "ASSAY_REPORT_OUT" in str(result.exception)
