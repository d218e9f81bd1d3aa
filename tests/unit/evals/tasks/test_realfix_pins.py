"""Realfix pins: the shipped ones load; a bad one is a ConfigError naming its file (and line); the prompt
carries the fixed paragraph; --tasks and --repo-url are checked against the pins before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.tasks._realfix import NO_INTERNET, WORK_RULES, load_pins, realfix_prompt
from assay.evals.tasks._run import TasksBenchmark

ROOT = Path(__file__).resolve().parents[4]
A, B, C = "a" * 40, "b" * 40, "c" * 40


def pin(**over: object) -> dict[str, object]:
    return {"repo": "https://example.invalid/r.git", "merge": A, "parent": B, "prompt": "fix it", **over}


def write(folder: Path, name: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def test_the_shipped_pins_load_with_full_commit_ids() -> None:
    pins = load_pins(ROOT / "eval" / "tasks" / "realfix")
    assert set(pins) == {"pyenv-doctor-https-clone", "pyenv-add-cpython-prerelease"}
    for p in pins.values():
        assert p.repo.startswith("https://github.com/pyenv/") and p.forbid_internet and p.url and p.note


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (pin(merge=A[:12]), r"bad.json:3: merge.*not a full commit id"),
        (pin(color="red"), "color"),
        ({"repo": "x", "merge": A, "parent": B}, "prompt"),
        (pin(parent=A), "merge and parent are the same commit"),
        ('{"repo": "x",\n  "merge": [}', r"bad.json:2: invalid JSON"),
    ],
)
def test_a_bad_pin_names_its_file(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path, "bad", data)
    with pytest.raises(ConfigError, match=message) as err:
        load_pins(tmp_path)
    assert str(path) in str(err.value)


def test_a_pin_name_is_a_case_id_and_an_empty_folder_is_said(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no realfix pins"):
        load_pins(tmp_path)
    write(tmp_path, "Bad_Name", pin())
    with pytest.raises(ConfigError, match="lowercase letters, digits and '-'"):
        load_pins(tmp_path)


def test_the_prompt_ends_with_the_fixed_paragraph_and_the_internet_rule_when_forbidden() -> None:
    pins = load_pins(ROOT / "eval" / "tasks" / "realfix")
    text = realfix_prompt(pins["pyenv-doctor-https-clone"])
    assert text.endswith(WORK_RULES + "\n\n" + NO_INTERNET)
    free = pins["pyenv-doctor-https-clone"].model_copy(update={"forbid_internet": False})
    assert realfix_prompt(free).endswith(WORK_RULES) and NO_INTERNET not in realfix_prompt(free)


def _bench(tmp_path: Path, **options: object) -> TasksBenchmark:
    return TasksBenchmark({"model": "scripted/x.yaml", "tasks_file": str(tmp_path / "tasks.json"), **options})


def test_tasks_and_repo_url_are_checked_against_the_pins(tmp_path: Path) -> None:
    write(tmp_path / "realfix", "one", pin())
    write(tmp_path / "realfix", "two", pin(repo="https://example.invalid/other.git", merge=C))
    suite = _bench(tmp_path).load_suite("realfix")
    assert [c.id for c in suite.cases] == ["one", "two"] and suite.version.startswith("realfix-")
    with pytest.raises(ConfigError, match="--tasks three: not a realfix pin"):
        _bench(tmp_path, tasks="three").load_suite("realfix")
    with pytest.raises(ConfigError, match="--repo-url replaces one repository, but the chosen pins name 2"):
        _bench(tmp_path, repo_url="/mirror").load_suite("realfix")
    one = _bench(tmp_path, repo_url="/mirror", tasks="one")
    assert [c.id for c in one.load_suite("realfix").cases] == ["one"]
    assert one.subject_config().extra["repo_url"] == "/mirror"
