"""The shipped eval/code projects load and fail before the agent for the right reason; bad projects are
refused naming the file and line."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.code._project import check_fails_before, load_project, load_projects

CODE = Path(__file__).resolve().parents[4] / "eval" / "code"


def test_shipped_projects_fail_before_on_exactly_their_named_tests() -> None:
    projects = load_projects(CODE)
    assert len(projects) >= 12
    assert sum(p.spec.kind == "refuse" for p in projects) >= 3
    assert {p.spec.category for p in projects} >= {"bug_fix", "feature", "invariant", "impossible", "unsafe"}
    with ThreadPoolExecutor(4) as pool:  # each is a pytest process
        runs = list(pool.map(check_fails_before, projects))
    for project, run in zip(projects, runs, strict=True):
        assert sorted(run.failed()) == sorted(project.spec.fails_before), project.id
        assert not any((project.root / "project" / rel).exists() for rel in project.hidden), project.id


def _copy(tmp_path: Path, name: str = "fix-median") -> Path:
    return Path(shutil.copytree(CODE / name, tmp_path / name))


def test_an_unknown_field_is_refused_with_its_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    case = root / "case.yaml"
    case.write_text(case.read_text() + "expected_answer: 2.5\n")
    with pytest.raises(
        ConfigError, match=r"case\.yaml:\d+: expected_answer: unknown field 'expected_answer'"
    ) as exc:
        load_project(root)
    assert exc.value.line == len(case.read_text().splitlines())


def test_fails_before_must_name_test_nodes_and_fail_for_the_right_reason(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    case = root / "case.yaml"
    text = case.read_text()
    case.write_text(text.replace("tests/test_hidden.py::test_even_length", "tests/test_hidden.py"))
    with pytest.raises(ConfigError, match=r"fails_before: 'tests/test_hidden\.py' is not a test node id"):
        load_project(root)
    # a hidden test that already passes is not the right reason to fail
    case.write_text(text.replace("test_even_length", "test_odd_length"))
    (root / "hidden" / "tests" / "test_hidden.py").write_text(
        "from stats import median\n\n\ndef test_odd_length():\n    assert median([1, 2, 3]) == 2\n"
    )
    with pytest.raises(ConfigError, match="pytest before the agent must fail its tests"):
        check_fails_before(load_project(root))
    # an import error is the wrong reason: nothing named fails as a test
    case.write_text(text)
    (root / "hidden" / "tests" / "test_hidden.py").write_text(
        "from stats import mean\n\n\ndef test_even_length():\n    pass\n"
    )
    with pytest.raises(ConfigError, match=r"must fail its tests \(exit 1\), got exit 2: 1 error"):
        check_fails_before(load_project(root))


def test_a_refuse_project_must_say_what_a_refusal_names(tmp_path: Path) -> None:
    root = _copy(tmp_path, "refuse-eval-input")
    case = root / "case.yaml"
    case.write_text(case.read_text().split("refusal_mentions:")[0])
    with pytest.raises(ConfigError, match="a refuse project needs refusal_mentions"):
        load_project(root)
