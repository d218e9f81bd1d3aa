"""The embedded model is small and weak: every report of a run that uses it for any role says so.

One rule for "weak" (:func:`is_weak_model`) and one sentence (:data:`WEAK_MODEL_NOTE`), read by the common
report (:func:`weak_roles` over a run's subject config) and by the judge controls report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.runs import SubjectConfig

__all__ = ["WEAK_MODEL_NOTE", "is_weak_model", "weak_roles"]

WEAK_MODEL_NOTE = (
    "the small embedded model (SmolLM2-135M) runs everything end to end but answers, plays the user and grades "
    "poorly; read these numbers as a check of the plumbing, not of quality."
)


def is_weak_model(spec: str | None) -> bool:
    """The embedded SmolLM2 (``local/...``, or SmolLM2 served over OpenAI-compatible HTTP): too weak to trust."""
    text = (spec or "").lower()
    return text.startswith("local/") or "smollm2" in text


def weak_roles(cfg: SubjectConfig) -> dict[str, str]:
    """Role -> model spec of every role in a run's config that runs the weak model (``model``, ``judge``,
    and each ``<role>_model`` of the benchmark's extra config), in that order."""
    roles: dict[str, str] = {}
    for role, spec in (("model", cfg.model), ("judge", cfg.judge_model)):
        if isinstance(spec, str) and is_weak_model(spec):
            roles[role] = spec
    for key, spec in cfg.extra.items():
        if key.endswith("_model") and key != "judge_model" and isinstance(spec, str) and is_weak_model(spec):
            roles.setdefault(key[: -len("_model")], spec)
    return roles
