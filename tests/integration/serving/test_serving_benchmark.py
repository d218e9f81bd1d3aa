"""`assay eval benchmark` end to end against assay's stub server: run dir, results.json, report, plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError, InfraError
from assay.evals.serving import ServingBenchmark, read_results
from assay.evals.serving._workloads import default_data_dir, load_mbox
from assay.exec import RunOptions, run_benchmark
from assay.runs import Status

TRIAGE_REPLY = ["category: work\n", "urgent: no\n", "personal: no\n"]


def _model(stub) -> str:
    return f"openai-compat/stub@{stub.base_url}/v1"


def test_email_triage_levels_end_to_end(stub_factory, tmp_path: Path) -> None:
    stub = stub_factory(ttft_s=0.01, itl_s=0.002, tokens=12, reply=TRIAGE_REPLY, n_ctx=4096)
    out = tmp_path / "run"
    options = {
        "model": _model(stub),
        "concurrency": "1,3",
        "num_requests": 6,
        "warmup": 2,
        "ctx_size": 4096,
        "slo": "ttft=1000,tpot=100",
    }
    result = run_benchmark(ServingBenchmark, options, RunOptions(out=out))
    assert result.exit_code == 0
    card = result.scorecard
    assert [c.case_id for c in card.cases] == ["c1", "c3"]
    emails = load_mbox(default_data_dir() / "triage.mbox")[:6]
    share_work = sum(e.category == "work" for e in emails) / 6
    for case in card.cases:
        m = case.metrics
        assert case.counts == {"PASS": 1}
        assert m["completed"] == 6 and m["errors"] == 0
        assert m["ttft_median_ms"] == pytest.approx(10, abs=5)
        assert m["goodput"] == pytest.approx(m["request_throughput"])
        assert m["accuracy_category"] == pytest.approx(share_work)
        assert m["answer_parse_rate"] == 1.0
    assert card.summary.metrics["ttft_median_ms"].direction == "lower"
    assert card.summary.metrics["output_throughput"].direction == "higher"

    results = read_results(out)
    assert results is not None and len(results.levels) == 2
    level = results.levels[0]
    assert level.target["ctx_size"] == 4096 and level.target["ctx_source"] == "llama.cpp /props"
    assert sum(not r["warmup"] for r in level.requests) == 6 and sum(r["warmup"] for r in level.requests) == 2
    first = next(r for r in level.requests if not r["warmup"])
    assert first["ttft_s"] > 0 and len(first["itl_s"]) == 11 and first["token_source"] == "server usage"

    report = (out / "report.md").read_text()
    assert "## Serving speed" in report and "### Email-triage accuracy" in report
    assert "context size: 4096 (source: llama.cpp /props)" in report
    for png in ("serving_latency_vs_throughput.png", "serving_ttft_distribution.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
        assert f"]({png})" in report
    assert "data:image/png;base64" in (out / "report.html").read_text()


def test_sweep_runs_sync_max_then_rates_in_between(stub_factory, tmp_path: Path) -> None:
    stub = stub_factory(ttft_s=0.02, itl_s=0.001, tokens=4, n_ctx=2048)
    options = {
        "model": _model(stub),
        "sweep": True,
        "sweep_steps": 2,
        "num_requests": 8,
        "concurrency": "8",
        "suite_unused": None,
    }
    result = run_benchmark(
        ServingBenchmark,
        {**options, "workload": "synthetic", "input_len": "16", "output_len": "4"},
        RunOptions(out=tmp_path / "run"),
    )
    card = result.scorecard
    assert result.exit_code == 0 and card.suite == "synthetic"
    by_id = {c.case_id: c for c in card.cases}
    assert list(by_id) == ["sync", "max", "sweep-1", "sweep-2"]
    sync = by_id["sync"].metrics["request_throughput"]
    top = by_id["max"].metrics["request_throughput"]
    assert top > 2 * sync  # the stub answers requests in parallel
    rates = [by_id[f"sweep-{k}"].metrics["offered_rate"] for k in (1, 2)]
    assert sync < rates[0] < rates[1] < top
    assert rates[0] == pytest.approx(sync + (top - sync) / 3)


def test_a_failing_server_is_an_error_not_a_crash(stub_factory, tmp_path: Path) -> None:
    stub = stub_factory(fail=True)
    result = run_benchmark(
        ServingBenchmark, {"model": _model(stub), "num_requests": 3}, RunOptions(out=tmp_path / "run")
    )
    (case,) = result.scorecard.cases
    assert case.counts == {"ERROR": 1}
    assert case.metrics["errors"] == 3
    levels = read_results(tmp_path / "run").levels
    assert all("HTTP 500" in r["error"] for r in levels[0].requests if not r["warmup"])


def test_unreachable_server_stops_the_run_as_an_outage(tmp_path: Path) -> None:
    from assay.models._server import free_port

    model = f"openai-compat/x@http://127.0.0.1:{free_port()}/v1"
    # caught by the preflight: an outage (exit 3) before anything ran, so no run directory is left behind
    with pytest.raises(InfraError, match=r"server unreachable.*no run directory was kept") as caught:
        run_benchmark(ServingBenchmark, {"model": model}, RunOptions(out=tmp_path / "run"))
    assert caught.value.exit_code == 3
    assert not (tmp_path / "run").exists()


def test_context_size_mismatch_is_a_usage_error_naming_the_flag(stub_factory, tmp_path: Path, capsys) -> None:
    from assay.cli._main import main

    stub = stub_factory(n_ctx=2048)
    with pytest.raises(ConfigError, match=r"--ctx-size 4096: the server runs with a context size of 2048"):
        run_benchmark(
            ServingBenchmark, {"model": _model(stub), "ctx_size": 4096}, RunOptions(out=tmp_path / "a")
        )
    with pytest.raises(SystemExit) as exc:
        main(
            ["eval", "benchmark", "--model", _model(stub), "--ctx-size", "1024", "--out", str(tmp_path / "b")]
        )
    assert exc.value.code == 1
    assert "--ctx-size 1024" in capsys.readouterr().err


def test_cli_runs_and_iterations_give_a_spread(stub_factory, tmp_path: Path) -> None:
    from assay.cli._main import main

    stub = stub_factory(ttft_s=0.005, tokens=6)
    out = tmp_path / "run"
    args = [
        "eval",
        "benchmark",
        "--model",
        _model(stub),
        "--suite",
        "synthetic",
        "--input-len",
        "uniform:8,32",
        "--output-len",
        "6",
        "--request-rate",
        "50,inf",
        "--concurrency",
        "4",
        "--num-requests",
        "10",
        "--burstiness",
        "0.5",
        "--iterations",
        "2",
        "--out",
        str(out),
    ]
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 0
    card = json.loads((out / "scorecard.json").read_text())
    assert [c["case_id"] for c in card["cases"]] == ["rate-50", "rate-inf"]
    ttft = card["summary"]["metrics"]["ttft_median_ms"]
    assert ttft["n"] == 2 and ttft["low"] <= ttft["value"] <= ttft["high"]
    # continuous: the per-iteration values travel as samples; the gate's relative tolerance comes from
    # their spread (and at least the declared 10%), not from a number baked into the scorecard
    assert ttft["kind"] == "continuous" and sorted(ttft["samples"]) == [ttft["low"], ttft["high"]]
    assert ttft["tolerance"] == pytest.approx(0.10)
    assert len(read_results(out).levels) == 4
    assert "Spread across 2 iterations (min–max)" in (out / "report.md").read_text()


def test_bad_flags_are_usage_errors(tmp_path: Path, capsys) -> None:
    from assay.cli._main import main

    for argv, flag in (
        (["--model", "gpt4"], "--model"),
        (["--slo", "ttft"], "--slo"),
        (["--suite", "dataset"], "--dataset"),
        (["--request-rate", "fast"], "--request-rate"),
        # flags the email-triage workload would ignore are refused, not dropped
        (["--endpoint", "completions"], "--endpoint completions"),
        (["--input-len", "64"], "--input-len"),
        (
            ["--workload", "dataset", "--dataset", str(tmp_path / "none.jsonl"), "--output-len", "8"],
            "--output-len",
        ),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["eval", "benchmark", *argv, "--out", str(tmp_path / "x")])
        assert exc.value.code == 1, argv
        assert flag in capsys.readouterr().err


def test_sweep_of_a_one_at_a_time_server_skips_the_rates_between(stub_factory, tmp_path: Path) -> None:
    stub = stub_factory(ttft_s=0.02, itl_s=0.002, tokens=3, parallel=1)
    options = {
        "model": _model(stub),
        "workload": "synthetic",
        "input_len": "8",
        "output_len": "3",
        "sweep": True,
        "sweep_steps": 2,
        "num_requests": 8,
    }
    card = run_benchmark(ServingBenchmark, options, RunOptions(out=tmp_path / "run")).scorecard
    by_id = {c.case_id: c for c in card.cases}
    sync, top = (by_id[k].metrics["request_throughput"] for k in ("sync", "max"))
    assert top == pytest.approx(sync, rel=0.1)  # a queue in front of one slot: no gain from concurrency
    assert by_id["max"].metrics["ttft_p99_ms"] > 5 * by_id["sync"].metrics["ttft_p99_ms"]  # but queueing
    assert by_id["sweep-1"].counts == {"SKIPPED": 1} and by_id["sweep-2"].counts == {"SKIPPED": 1}
    assert "one request at a time" in (tmp_path / "run" / "report.md").read_text()


def test_after_saturation_the_higher_sweep_rates_are_skipped() -> None:
    bench = ServingBenchmark({"sweep": True, "sweep_steps": 3, "num_requests": 4})
    bench.load_suite("email-triage")
    bench._saturated[0] = "server saturated at 9 req/s offered (6 req/s achieved)"
    outcome = bench._sweep_level(bench.levels["sweep-3"], 0)
    assert outcome.status == Status.SKIPPED and "saturated" in outcome.skip_reason
    bench._sweep[1] = {"sync": 2.0, "max": 10.0}
    level = bench._sweep_level(bench.levels["sweep-2"], 1)
    assert level.rate == pytest.approx(6.0)


def test_resumed_sweep_takes_its_ends_from_the_run_directory(stub_factory, tmp_path: Path) -> None:
    # requests slow enough (~70 ms) that 6 at once clearly beat one at a time even on a loaded machine:
    # with ~13 ms ones the sweep sometimes found max "not clearly above" sync and skipped its rate level
    stub = stub_factory(ttft_s=0.05, itl_s=0.01, tokens=3)
    out = tmp_path / "run"
    options = {
        "model": _model(stub),
        "workload": "synthetic",
        "input_len": "8",
        "output_len": "3",
        "sweep": True,
        "sweep_steps": 1,
        "num_requests": 6,
        "concurrency": "6",
    }
    first = run_benchmark(ServingBenchmark, options, RunOptions(out=out)).scorecard
    rate = first.case("sweep-1").metrics["offered_rate"]
    # forget the rate level, as if the run had been killed before it
    journal = out / "results.jsonl"
    journal.write_text(
        "".join(line + "\n" for line in journal.read_text().splitlines() if '"sweep-1"' not in line)
    )
    resumed = run_benchmark(None, None, RunOptions(resume=out)).scorecard
    assert resumed.case("sweep-1").counts == {"PASS": 1}
    assert resumed.case("sweep-1").metrics["offered_rate"] == pytest.approx(rate)


def test_dataset_workload_and_case_listing(stub_factory, tmp_path: Path, capsys) -> None:
    from assay.cli._main import main

    data = tmp_path / "prompts.jsonl"
    data.write_text(
        '{"prompt": "say hi", "max_tokens": 3}\n{"messages": [{"role": "user", "content": "yo"}]}\n'
    )
    stub = stub_factory(tokens=5)
    with pytest.raises(SystemExit) as exc:
        main(["eval", "benchmark", "--list", "--concurrency", "1,2"])
    assert exc.value.code in (0, None)
    assert "c1\tconcurrency=1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "eval",
                "benchmark",
                "--model",
                _model(stub),
                "--dataset",
                str(data),
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert exc.value.code == 0
    card = json.loads((tmp_path / "run" / "scorecard.json").read_text())
    assert card["suite"] == "dataset" and card["cases"][0]["metrics"]["completed"] == 2
    tokens = sorted(
        r["output_tokens"] for r in read_results(tmp_path / "run").levels[0].requests if not r["warmup"]
    )
    assert tokens == [3, 5]  # the line's own max_tokens, else the default cap (the stub sends 5)


def test_baseline_and_compare_through_the_gate(stub_factory, tmp_path: Path) -> None:
    """Same server: no regression. A server 60 ms slower to first token: a latency regression (exit 2)."""
    from assay.cli._main import main

    def run(stub, name: str, *extra: str) -> int:
        args = [
            "eval",
            "benchmark",
            "--model",
            f"openai-compat/stub@{stub.base_url}/v1",
            "--suite",
            "synthetic",
            "--input-len",
            "8",
            "--output-len",
            "4",
            "--concurrency",
            "2",
            "--num-requests",
            "8",
            "--iterations",
            "2",
            "--out",
            str(tmp_path / name),
            *extra,
        ]
        with pytest.raises(SystemExit) as exc:
            main(args)
        return exc.value.code

    fast = stub_factory(ttft_s=0.050, itl_s=0.010, tokens=4)
    assert run(fast, "base", "--save-baseline", str(tmp_path / "baseline")) == 0
    assert run(fast, "same", "--compare", str(tmp_path / "baseline")) == 0
    slow = stub_factory(ttft_s=0.110, itl_s=0.010, tokens=4)
    assert run(slow, "slow", "--compare", str(tmp_path / "baseline")) == 2
    comparison = json.loads((tmp_path / "slow" / "comparison.json").read_text())
    regressed = {m["name"] for m in comparison["metrics"] if m["verdict"] == "regressed"}
    assert "ttft_median_ms" in regressed and "itl_median_ms" not in regressed


def test_registered_as_the_benchmark_command() -> None:
    from assay.evals import get_benchmark

    assert get_benchmark("benchmark") is ServingBenchmark
    names = {s.name for s in ServingBenchmark.metric_specs}
    assert {
        "ttft_p99_ms",
        "tpot_median_ms",
        "itl_p90_ms",
        "e2e_mean_ms",
        "goodput",
        "accuracy_urgent",
    } <= names
    directions = {s.name: s.direction for s in ServingBenchmark.metric_specs}
    assert directions["e2e_p99_ms"] == "lower" and directions["output_throughput"] == "higher"


def test_structured_sends_the_schema_records_it_and_is_not_comparable(stub_factory, tmp_path: Path) -> None:
    """--structured: the request carries the JSON schema, the run records it, and the gate refuses to hold a
    structured run against a free-text baseline (exit 3) instead of calling the speed change a regression."""
    from assay.cli._main import main

    reply = ['{"category": "work", ', '"urgent": false, ', '"personal": false}']
    stub = stub_factory(ttft_s=0.005, itl_s=0.001, tokens=3, reply=reply)

    def run(name: str, *extra: str) -> int:
        args = ["eval", "benchmark", "--model", _model(stub), "--concurrency", "1", "--num-requests", "4"]
        args += ["--warmup", "1", "--out", str(tmp_path / name), *extra]
        with pytest.raises(SystemExit) as exc:
            main(args)
        return exc.value.code

    assert run("plain", "--save-baseline", str(tmp_path / "baseline"), "--force") == 0
    assert all(r.response_format is None for r in stub.fetch_records())
    before = len(stub.fetch_records())
    assert run("structured", "--structured", "--compare", str(tmp_path / "baseline")) == 3
    sent = stub.fetch_records()[before:]
    assert len(sent) == 5 and all(r.response_format is not None for r in sent)
    assert sent[0].response_format["schema"]["properties"]["category"]["enum"][0] == "work"

    comparison = json.loads((tmp_path / "structured" / "comparison.json").read_text())
    assert not comparison["comparable"] and "suite version" in " ".join(comparison["not_comparable"])
    meta = json.loads((tmp_path / "structured" / "meta.json").read_text())
    assert "json_object+schema" in json.dumps(meta)
    level = read_results(tmp_path / "structured").levels[0]
    assert level.workload["structured"] is True and level.workload["max_tokens"] == 48
    measured = [r for r in level.requests if not r["warmup"]]
    assert all(r["extra"]["answer_format"] == "json" and r["extra"]["parsed"] for r in measured)
    card = json.loads((tmp_path / "structured" / "scorecard.json").read_text())
    (case,) = card["cases"]
    emails = load_mbox(default_data_dir() / "triage.mbox")[:4]
    assert case["metrics"]["answer_parse_rate"] == 1.0 and case["metrics"]["answer_mode_share"] == 1.0
    assert case["metrics"]["accuracy_category"] == pytest.approx(
        sum(e.category == "work" for e in emails) / 4
    )
    report = (tmp_path / "structured" / "report.md").read_text()
    assert "JSON-schema response_format (`--structured`)" in report and "majority baseline" in report


def test_a_level_that_drops_requests_fails_on_its_error_rate(stub_factory, tmp_path: Path) -> None:
    stub = stub_factory(fail_every=4)  # one request in four answered with HTTP 500
    options = {"model": _model(stub), "num_requests": 8, "warmup": 0}
    (case,) = run_benchmark(ServingBenchmark, options, RunOptions(out=tmp_path / "strict")).scorecard.cases
    assert case.counts == {"FAIL": 1}
    assert case.metrics["errors"] == 2 and case.metrics["error_rate"] == 0.25
    assert case.metrics["timeout_rate"] == 0.0
    rows = [json.loads(line) for line in (tmp_path / "strict" / "results.jsonl").read_text().splitlines()]
    assert "above the --max-error-rate 1.0%" in rows[0]["details"]["failure"]
    lenient = run_benchmark(
        ServingBenchmark, {**options, "max_error_rate": 0.3}, RunOptions(out=tmp_path / "lenient")
    )
    assert lenient.scorecard.cases[0].counts == {"PASS": 1}
    with pytest.raises(ConfigError, match="--max-error-rate"):
        ServingBenchmark({"max_error_rate": 1.5})


def test_error_and_timeout_rates_are_gated_metrics(stub_factory, tmp_path: Path) -> None:
    stub = stub_factory()
    options = {"model": _model(stub), "num_requests": 4, "warmup": 0}
    metrics = run_benchmark(
        ServingBenchmark, options, RunOptions(out=tmp_path / "r")
    ).scorecard.summary.metrics
    for name in ("error_rate", "timeout_rate"):
        assert metrics[name].gated and metrics[name].direction == "lower" and metrics[name].value == 0.0
