"""Probes of one scenario share its simulation: only the probe that ran it carries its time."""

from __future__ import annotations

import asyncio
import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from assay.evals.memory import MemoryBenchmark
from assay.exec import RunOptions, run_benchmark


def test_waiting_for_the_shared_simulation_is_not_a_probe_s_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    from assay.evals.memory import _benchmark as memory

    simulate = memory.simulate

    async def slow_simulate(*args, **kwargs):  # a simulation that waits (as on a model) lets probes queue
        await asyncio.sleep(0.3)
        return await simulate(*args, **kwargs)

    monkeypatch.setattr(memory, "simulate", slow_simulate)
    opts = RunOptions(suite="pr", out=tmp_path / "run", max_concurrency=4, command_line=["t"])
    run_benchmark(MemoryBenchmark, {}, opts)
    by_scenario: dict[str, list[float]] = defaultdict(list)
    for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_scenario[row["case_id"].split("/")[0]].append(row["elapsed_s"])
    big = [times for times in by_scenario.values() if len(times) >= 4]
    assert big
    for times in big:  # one probe simulated; the others only read its result
        assert statistics.median(times) < 0.5 * max(times), times
