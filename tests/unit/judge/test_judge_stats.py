"""The controls statistics and the prompt digest, free of any rubric."""

from __future__ import annotations

import hashlib

import pytest

from assay.judge import UNUSABLE, agreement, cohen_kappa, consistent, prompt_digest, self_consistency


def test_cohen_kappa_known_values() -> None:
    assert cohen_kappa(["P", "P", "F", "F"], ["P", "F", "F", "F"]) == (0.5, 0.75)
    assert cohen_kappa(["P", "F"], ["F", "P"]) == (-1.0, 0.0)
    assert cohen_kappa(["P", "P"], ["P", "P"]) == (None, 1.0)  # undefined: one category throughout
    with pytest.raises(ValueError, match="equally long"):
        cohen_kappa(["P"], [])


def test_agreement_is_the_share_of_verdicts_equal_to_their_labels() -> None:
    assert agreement(["PASS", "PASS", "FAIL"], ["PASS", UNUSABLE, "FAIL"]) == 0.6667
    assert agreement([], []) is None
    with pytest.raises(ValueError, match="one verdict per label"):
        agreement(["PASS"], [])


def test_self_consistency_counts_controls_whose_usable_repeats_all_match() -> None:
    assert consistent(["FAIL", "FAIL"]) and not consistent(["FAIL", "PASS"])
    assert not consistent([UNUSABLE, UNUSABLE])  # unusable every time is no consistency
    assert self_consistency([["PASS", "PASS"], ["PASS", "FAIL"], [UNUSABLE, UNUSABLE]]) == 0.3333
    assert self_consistency([]) == 0.0


def test_the_prompt_digest_is_the_sha256_of_its_parts_joined_by_newlines() -> None:
    assert prompt_digest("system", "agent-1") == hashlib.sha256(b"system\nagent-1").hexdigest()
    assert prompt_digest("system") == hashlib.sha256(b"system").hexdigest()
    assert prompt_digest("system", "agent-1") != prompt_digest("system", "agent-2")
