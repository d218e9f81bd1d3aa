"""Email triage end to end against the real embedded llama.cpp server (SmolLM2-135M), started and stopped
by the benchmark."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from assay.evals.serving import ServingBenchmark, read_results
from assay.evals.serving._triage import CATEGORIES
from assay.exec import RunOptions, run_benchmark

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_email_triage_against_the_embedded_model(tmp_path: Path) -> None:
    out = tmp_path / "run"
    options = {
        "model": "local/smollm2",
        "concurrency": "2",
        "num_requests": 3,
        "warmup": 1,
        "max_tokens": 12,
    }
    result = run_benchmark(ServingBenchmark, options, RunOptions(out=out))
    assert result.exit_code == 0, result.stopped_reason
    card = result.scorecard
    assert card.config.model == "local/smollm2" and card.suite == "email-triage"
    for case in card.cases:
        m = case.metrics
        assert case.counts == {"PASS": 1}, case
        assert m["completed"] == 3 and m["errors"] == 0 and m["timeouts"] == 0
        assert 0 < m["ttft_median_ms"] < m["e2e_median_ms"]
        assert m["tpot_median_ms"] > 0 and m["itl_median_ms"] > 0 and m["output_throughput"] > 0
        for key in ("accuracy_category", "accuracy_urgent", "accuracy_personal", "answer_parse_rate"):
            assert 0.0 <= m[key] <= 1.0

    levels = read_results(out).levels
    target = levels[0].target
    # llama.cpp's server tells its window on /props
    assert target["ctx_size"] == 2048 and target["ctx_source"] == "llama.cpp /props"
    measured = [r for lv in levels for r in lv.requests if not r["warmup"]]
    assert len(measured) == 3
    for r in measured:
        assert r["ok"] and r["input_tokens"] > 50 and 1 <= r["output_tokens"] <= 12
        # assay's llama.cpp server ends each stream with a usage chunk: the server's own count
        assert r["token_source"] == "server usage"
        assert r["extra"]["email"].startswith("email-") and "answer_text" in r["extra"]
    assert "## Serving speed" in (out / "report.md").read_text()

    # the server assay started is gone again
    port = urlsplit(target["base_url"]).port
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


def test_structured_answers_from_the_embedded_model_all_parse(tmp_path: Path) -> None:
    """llama.cpp's server takes ``response_format: {"type": "json_object", "schema": ...}`` and
    decodes under the schema's grammar: every answer is JSON naming a valid value for all three fields."""
    out = tmp_path / "run"
    options = {
        "model": "local/smollm2",
        "concurrency": "1",
        "num_requests": 6,
        "warmup": 1,
        "max_tokens": 32,
        "structured": True,
    }
    result = run_benchmark(ServingBenchmark, options, RunOptions(out=out))
    assert result.exit_code == 0, result.stopped_reason
    card = result.scorecard
    assert card.config.extra["structured"] == "json_object+schema" and card.suite_version.startswith(
        "email-triage+json-schema-"
    )
    (case,) = card.cases
    m = case.metrics
    assert m["completed"] == 6 and m["errors"] == 0
    for k in ("category", "urgent", "personal"):
        assert m[f"parse_rate_{k}"] == 1.0
        assert 0.0 <= m[f"accuracy_{k}"] <= 1.0 and 0.0 <= m[f"baseline_{k}"] <= 1.0
    assert m["answer_parse_rate"] == 1.0
    measured = [r for lv in read_results(out).levels for r in lv.requests if not r["warmup"]]
    assert len(measured) == 6
    for r in measured:
        extra = r["extra"]
        assert extra["answer_format"] == "json" and extra["parsed"], extra["answer_text"]
        assert extra["answer"]["category"] in CATEGORIES
        assert isinstance(extra["answer"]["urgent"], bool) and isinstance(extra["answer"]["personal"], bool)
        assert r["output_tokens"] <= 32
