"""The judge on the embedded model (SmolLM2 135M): constrained decoding gets a parseable answer."""

from __future__ import annotations

import pytest

from assay.evals.agent._judge_view import JudgeView, judge_view
from assay.evals.agent._verdict import derive
from assay.judge import Judge
from assay.models import get_model

pytestmark = pytest.mark.local_model


async def test_the_embedded_model_judges_in_one_constrained_call(scenario, turns, passing_checks) -> None:
    model = get_model(
        "local/smollm2", ctx_size=4096, defaults={"temperature": 0, "seed": 7, "max_tokens": 600}
    )
    outcome = await judge_view(Judge(model, constrained=True), JudgeView.of(scenario, turns, passing_checks))
    # a 135M model's scores mean little; what is checked is that its answer always has the shape
    assert outcome.error is None, outcome.raw
    assert outcome.calls == 1 and outcome.answer is not None
    judgement = derive(outcome.answer, passing_checks, 2)
    assert [t.turn for t in judgement.turns] == [1, 2] and 0.0 <= judgement.score <= 1.0
