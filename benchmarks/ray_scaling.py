"""Speedup of `--executor ray` with 1, 2 and 4 workers on a latency-bound subject, and its per-attempt overhead.

Each attempt of the scripted subject (tests/integration/exec/ray_subjects.py) waits ``--sleep`` seconds on
I/O and passes. For W in 1, 2, 4 a local Ray head with W CPUs runs the suite with W attempts in flight;
the local executor runs it at -j 1 (the speedup's baseline) and at -j W (what one machine does with the same
concurrency, since the attempts only wait). The overhead is measured with --sleep 0: the wall time per
attempt of the Ray run minus the local run's (task submission, the worker's reply, the files shipped back,
the head probe). Every time is the whole run_benchmark call (journal, fold, reports included), the head's
start excluded; a first run of W attempts
of 1 s on each new head (its worker processes starting) is timed apart.

    python benchmarks/ray_scaling.py [--attempts 16] [--sleep 0.5] [--overhead-attempts 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

SUBJECTS = Path(__file__).resolve().parents[1] / "tests" / "integration" / "exec"
sys.path.insert(0, str(SUBJECTS))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(SUBJECTS), os.environ.get("PYTHONPATH")) if p)

import ray  # noqa: E402 - the workers inherit PYTHONPATH, set above, when the head starts
from ray_subjects import SleepBenchmark  # noqa: E402

from assay.exec import RunOptions, run_benchmark  # noqa: E402


def _run(tmp: Path, executor: str, attempts: int, sleep: float, concurrency: int) -> float:
    opts = RunOptions(
        executor=executor, max_concurrency=concurrency, results_dir=tmp / executor, command_line=["bench"]
    )
    t0 = time.perf_counter()
    result = run_benchmark(SleepBenchmark, {"cases": attempts, "sleep": sleep}, opts)
    wall = time.perf_counter() - t0
    counts = result.scorecard.summary.counts
    assert counts["PASS"] == attempts, counts
    return wall


def _head(cpus: int, tmp: Path) -> None:
    ray.init(
        address="local",
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        _temp_dir=tempfile.mkdtemp(prefix="ray-", dir=tmp),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--overhead-attempts", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("ASSAY_NO_LOCK", "1")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.environ["ASSAY_HOME"] = str(tmp / "home")
        serial = _run(tmp, "local", args.attempts, args.sleep, 1)
        print(
            f"attempts={args.attempts} sleep_s={args.sleep} cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f}"
        )
        print(f"local -j 1: {serial:.2f} s (baseline)")
        for workers in (1, 2, 4):
            local = _run(tmp, "local", args.attempts, args.sleep, workers)
            _head(workers, tmp)
            try:  # the first run on a new head also starts its worker processes: timed apart
                warm = _run(tmp, "ray", workers, 1.0, workers)  # W at once: W worker processes started
                remote = _run(tmp, "ray", args.attempts, args.sleep, workers)
                if workers == 2:
                    n = args.overhead_attempts
                    ray_noop = _run(tmp, "ray", n, 0.0, workers)
                    local_noop = _run(tmp, "local", n, 0.0, workers)
            finally:
                ray.shutdown()
            print(
                f"workers={workers}: ray {remote:.2f} s, speedup x{serial / remote:.2f} | "
                f"local -j {workers} {local:.2f} s, speedup x{serial / local:.2f} | "
                f"first ray run ({workers} attempts of 1 s, workers starting) {warm:.2f} s"
            )
        per_attempt_ms = 1000 * (ray_noop - local_noop) / n
        print(
            f"overhead: {n} no-op attempts, 2 workers: ray {ray_noop:.2f} s, local {local_noop:.2f} s, "
            f"{per_attempt_ms:.1f} ms per attempt"
        )


if __name__ == "__main__":
    main()
