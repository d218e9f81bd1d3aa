"""Every secret shape is scrubbed although texts without a shape's leading hint skip the regex pass."""

from __future__ import annotations

import random
import re

import pytest

from assay._util import MARKER, Scrubber
from assay._util._scrub import _ANY_SHAPE, SECRET_SHAPES, may_hold_shape

#: one example per entry of SECRET_SHAPES, in its order (a new shape needs an example here)
EXAMPLES = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
    "sk-ant-api03-" + "A" * 24,
    "sk-proj-" + "b" * 24,
    "ASIA" + "Q" * 16,
    "AWS_Secret_Access_Key = " + "c/+=" * 10,
    "ghr_" + "d" * 36,
    "github_pat_" + "E" * 40,
    "glpat-" + "f" * 20,
    "xoxb-" + "1" * 12,
    "AIza" + "g" * 35,
    "hf_" + "H" * 30,
    "BeArEr " + "i" * 20,
)


def test_there_is_one_example_per_shape_and_it_is_that_shape() -> None:
    assert len(EXAMPLES) == len(SECRET_SHAPES)
    for shape, example in zip(SECRET_SHAPES, EXAMPLES, strict=True):
        assert re.fullmatch(shape, example), (shape, example)


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_shape_is_scrubbed_in_running_text(example: str) -> None:
    text = f'{{"answer": "the value is {example} ok"}}'
    assert may_hold_shape(text)
    out = Scrubber(env={}).scrub_text(text)
    assert out == _ANY_SHAPE.sub(MARKER, text) and MARKER in out and example not in out


def test_a_text_without_any_hint_is_left_as_it_is() -> None:
    text = '{"case_id": "c00001", "status": "PASS", "commit": "ba5d92b", "note": "high ground, task 3"}'
    assert not may_hold_shape(text)
    assert Scrubber(env={}).scrub_text(text) == text


def test_the_shortcut_gives_what_the_full_pass_gives_on_mixed_texts() -> None:
    rng = random.Random(7)
    pieces = [*EXAMPLES, " ", "\n", "sk", "-", "AKIA", "gh", "p_", "Bearer", "task-", "x" * 20, "é", "İ", '"']
    scrubber = Scrubber(env={})
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert scrubber.scrub_text(text) == _ANY_SHAPE.sub(MARKER, text), text
