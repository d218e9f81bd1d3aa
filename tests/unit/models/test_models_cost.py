"""Rate card lookup, overriding it, and the never-0-for-unknown rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.models import Usage, load_rate_card, price_usage


def test_shipped_card_prices_known_models() -> None:
    card = load_rate_card()
    assert card.lookup("openai", "gpt-4o-mini") is not None
    assert card.lookup("openai-compat", "gpt-4o-mini-2024-07-18") == card.lookup("openai", "gpt-4o-mini")
    # the longest (most specific) pattern wins: gpt-4o-mini is not priced as gpt-4o
    mini = card.lookup("openai", "gpt-4o-mini")
    full = card.lookup("openai", "gpt-4o")
    assert mini is not None and full is not None and mini.input < full.input
    assert card.lookup("local", "smollm2") is not None
    assert card.lookup("openai-compat", "some-unknown-model") is None


def test_pricing_rules() -> None:
    u = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000, calls=1)
    priced = price_usage(u, provider="anthropic", model="claude-sonnet-4-5")
    assert priced.cost_usd == pytest.approx(3 + 15 + 0.3) and priced.cost_source == "harness_counts"
    unknown = price_usage(u, provider="openai-compat", model="mystery", base_url="https://example.org/v1")
    assert unknown.cost_usd is None and unknown.unpriced_calls == 1
    loopback = price_usage(u, provider="openai-compat", model="mystery", base_url="http://127.0.0.1:8080/v1")
    assert loopback.cost_usd == 0.0
    silent = price_usage(Usage(calls=1), provider="openai", model="gpt-4o", tokens_reported=False)
    assert silent.cost_usd is None and silent.cost_source is None and silent.unpriced_calls == 1
    reported = price_usage(u, provider="openai-compat", model="mystery", reported_cost=0.5)
    assert reported.cost_usd == 0.5 and reported.cost_source == "api_equivalent"


def test_sums_keep_unknown_cost_visible() -> None:
    a = price_usage(Usage(input_tokens=10, calls=1), provider="local", model="smollm2")
    b = price_usage(Usage(calls=1), provider="openai", model="gpt-4o", tokens_reported=False)
    total = a + b
    assert total.calls == 2 and total.unpriced_calls == 1 and total.cost_usd == 0.0


def test_override_with_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"models": {"mystery*": {"input": 1.0, "output": 2.0}}}))
    monkeypatch.setenv("ASSAY_RATE_CARD", str(card))
    priced = price_usage(Usage(input_tokens=10**6, output_tokens=10**6), provider="x", model="mystery-7b")
    assert priced.cost_usd == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("content", "needle"),
    [("{not json", "not valid JSON"), ('{"models": {"m": {"input": -1, "output": 0}}}', "models.m.input")],
)
def test_bad_override_names_the_file_and_env_var(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, needle: str
) -> None:
    card = tmp_path / "card.json"
    card.write_text(content)
    monkeypatch.setenv("ASSAY_RATE_CARD", str(card))
    with pytest.raises(ConfigError, match=needle) as info:
        load_rate_card()
    assert "ASSAY_RATE_CARD" in str(info.value) and str(card) in str(info.value)


def test_metered_usage_replaces_cost_with_the_meter_delta() -> None:
    from assay.models import BillingMeter, metered_usage

    class Meter:
        name = "fake"

        def __init__(self) -> None:
            self.readings = [10.0, 10.25]

        def spent_usd(self) -> float | None:
            return self.readings.pop(0)

    meter = Meter()
    assert isinstance(meter, BillingMeter)
    before = meter.spent_usd()
    total = price_usage(Usage(input_tokens=5, calls=1), provider="openai-compat", model="mystery")
    after = meter.spent_usd()
    out = metered_usage(total, before, after)
    assert out.cost_usd == pytest.approx(0.25) and out.cost_source == "metered" and out.unpriced_calls == 0
    assert metered_usage(total, None, after).cost_usd is None
