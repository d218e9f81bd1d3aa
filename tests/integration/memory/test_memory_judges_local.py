"""Both memory judges on the embedded SmolLM2: plumbing only (the prompt sent, the verdict read back, the
calls counted), never the tiny model's judgment."""

from __future__ import annotations

import pytest

from assay.evals.memory._grading import judge_locomo, judge_longmemeval
from assay.judge import Judge, holds_to_schema
from assay.models import get_model

pytestmark = [pytest.mark.slow, pytest.mark.local_model]


async def test_locomo_and_longmemeval_judges_on_the_embedded_model() -> None:
    spec = "local/smollm2"
    model = get_model(spec)
    judge = Judge(
        model, options={"temperature": 0, "max_tokens": 64, "seed": 7}, constrained=holds_to_schema(spec)
    )
    locomo = await judge_locomo(
        judge, "Where does Grace work?", "botanical garden", "At the botanical garden"
    )
    # decoding is held to the label's schema: whatever it judges, the verdict and its reason are read
    assert locomo.correct is not None, locomo.error
    assert isinstance(locomo.reason, str) and locomo.usage.calls >= 1 and locomo.usage.output_tokens > 0
    lme = await judge_longmemeval(
        judge,
        "temporal-reasoning",
        "How many days between the trips?",
        "18 days",
        "19 days",
        abstention=False,
    )
    # a free-text yes/no: read when the reply starts with one, else asked again and left unjudged
    assert lme.usage.calls >= 1 and (lme.correct is not None or lme.error)
