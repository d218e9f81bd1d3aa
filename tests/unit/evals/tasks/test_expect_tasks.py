"""Where a model and suite's expectations live, and what a tasks expectations file must carry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals.tasks._expect import expectations_path, load_tasks_expectations, model_label, propose_tasks


def test_the_file_is_named_by_model_and_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_label("openai-compat/smollm2@http://127.0.0.1:8098/v1") == "openai-compat_smollm2"
    monkeypatch.delenv("ASSAY_TASKS_EXPECTATIONS_DIR", raising=False)
    assert expectations_path("local/smollm2", "core") == Path(
        "eval/tasks/expectations/local_smollm2.core.json"
    )
    monkeypatch.setenv("ASSAY_TASKS_EXPECTATIONS_DIR", str(tmp_path))
    assert expectations_path("local/smollm2", "adversarial") == tmp_path / "local_smollm2.adversarial.json"


def test_measured_on_needs_a_commit_and_a_machine(tmp_path: Path) -> None:
    base = {"benchmark": "tasks", "suite": "core", "limits": {"min_passed": 1}}
    f = tmp_path / "e.json"
    f.write_text(json.dumps({**base, "measured_on": [{"commit": "abc", "machine": "box"}]}))
    assert load_tasks_expectations(f)[1] == [{"commit": "abc", "machine": "box"}]
    f.write_text(json.dumps({**base, "measured_on": [{"commit": "abc"}]}))
    with pytest.raises(ConfigError, match=r"measured_on\[0\]: needs a commit and a machine"):
        load_tasks_expectations(f)


def test_propose_writes_json_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="JSON"):
        propose_tasks([tmp_path], tmp_path / "x.yaml")
