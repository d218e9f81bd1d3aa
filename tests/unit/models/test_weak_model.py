"""Every run that uses the embedded model for a role says so in its report, whatever the benchmark: one rule
(`is_weak_model`), one sentence, read over the run's subject config."""

from __future__ import annotations

from assay.models.weak import WEAK_MODEL_NOTE, is_weak_model, weak_roles
from assay.runs.records import SubjectConfig


def test_the_embedded_model_is_weak_by_any_route() -> None:
    assert is_weak_model("local/smollm2") and is_weak_model("openai-compat/smollm2@http://127.0.0.1:8098/v1")
    assert not is_weak_model("anthropic/claude-sonnet-4-5") and not is_weak_model(None)


def test_weak_roles_cover_model_judge_and_each_role_model() -> None:
    cfg = SubjectConfig(
        subject="claude-code",
        model="openai-compat/smollm2@http://127.0.0.1:8098/v1",
        judge_model="openai/gpt-4.1",
        extra={"simulator_model": "local/smollm2", "fixer_model": "openai/gpt-4.1", "harness": "local/x"},
    )
    assert weak_roles(cfg) == {
        "model": "openai-compat/smollm2@http://127.0.0.1:8098/v1",
        "simulator": "local/smollm2",
    }
    assert weak_roles(SubjectConfig(model="anthropic/claude-sonnet-4-5")) == {}
    assert "plumbing, not of quality" in WEAK_MODEL_NOTE
