"""Judge calibration statistics over labelled controls, for any rubric whose verdicts are labels.

agreement(labels, verdicts)      share of judgings whose verdict is the label
cohen_kappa(a, b)                chance-corrected agreement of two raters (a judge and the labels, two judges)
self_consistency(repeats)        share of controls whose repeated verdicts are all usable and all the same
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["UNUSABLE", "agreement", "cohen_kappa", "consistent", "self_consistency"]

#: the verdict of a judging with no usable answer: a disagreement with any label
UNUSABLE = "ERROR"


def agreement(labels: Sequence[str], verdicts: Sequence[str]) -> float | None:
    """The share of ``verdicts`` equal to their ``labels`` (rounded to 4 places); None when there are none."""
    if len(labels) != len(verdicts):
        raise ValueError(f"agreement needs one verdict per label (got {len(labels)} and {len(verdicts)})")
    if not labels:
        return None
    return round(sum(a == b for a, b in zip(labels, verdicts, strict=True)) / len(labels), 4)


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> tuple[float | None, float]:
    """Cohen's kappa of two raters over the same items, and their observed agreement.

    Kappa is None when chance agreement is 1 (both raters used one and the same category throughout).
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"kappa needs two equally long, non-empty ratings (got {len(a)} and {len(b)})")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    chance = sum((a.count(c) / n) * (b.count(c) / n) for c in set(a) | set(b))
    if chance >= 1.0:
        return None, observed
    return (observed - chance) / (1 - chance), observed


def consistent(verdicts: Sequence[str], unusable: str = UNUSABLE) -> bool:
    """One control's repeats agree: every verdict usable and all the same."""
    return len(set(verdicts)) == 1 and unusable not in verdicts


def self_consistency(repeats: Sequence[Sequence[str]], unusable: str = UNUSABLE) -> float:
    """The share of controls (each a sequence of its repeated verdicts) that are :func:`consistent`; 0 for none."""
    if not repeats:
        return 0.0
    return round(sum(consistent(v, unusable) for v in repeats) / len(repeats), 4)
