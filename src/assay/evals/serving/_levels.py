"""Turning the load flags into load levels (one case each), and the sweep's rates between its ends."""

from __future__ import annotations

import math
import statistics
from typing import Any

from assay.errors import ConfigError
from assay.evals.serving._load import LoadLevel
from assay.evals.serving._metrics import LevelFigures, RequestTiming
from assay.evals.serving._options import ServingOptions
from assay.runs import Status

__all__ = [
    "MAX_ERROR_RATE",
    "SATURATION_RATIO",
    "build_levels",
    "check_workload_flags",
    "level_verdict",
    "max_error_rate",
    "parse_list",
    "saturated",
    "sustained_rates",
    "sweep_rate",
]

#: a rate level is saturated when the server completes less than this share of the offered rate
SATURATION_RATIO = 0.85
#: a level fails when more than this share of its measured requests errored or timed out (--max-error-rate)
MAX_ERROR_RATE = 0.01
#: in-flight cap of the sweep's "max" level when --concurrency is not given
SWEEP_MAX_CONCURRENCY = 64


def parse_list(text: str | None, flag: str, *, kind: type = float, allow_inf: bool = False) -> list[Any]:
    if text is None or str(text).strip() == "":
        return []
    out: list[Any] = []
    for part in str(text).split(","):
        p = part.strip().lower()
        try:
            if allow_inf and p in ("inf", "max"):
                out.append(math.inf)
                continue
            value = kind(p)
        except ValueError:
            raise ConfigError(
                f"{flag}: {part.strip()!r} is not a {'number' if kind is float else 'whole number'}"
            ) from None
        if not value > 0:
            raise ConfigError(f"{flag}: {part.strip()!r} must be positive")
        out.append(value)
    return out


def _rate_name(rate: float) -> str:
    return "rate-inf" if math.isinf(rate) else f"rate-{rate:g}"


def build_levels(options: ServingOptions, natural_size: int | None) -> list[LoadLevel]:
    concurrency = parse_list(options.concurrency, "--concurrency", kind=int)
    rates = parse_list(options.request_rate, "--request-rate", allow_inf=True)
    burstiness = options.burstiness
    if not burstiness > 0:
        raise ConfigError("--burstiness must be positive (1 = Poisson)")
    duration = options.duration
    num = options.num_requests
    if num is not None and num < 1:
        raise ConfigError("--num-requests must be at least 1")
    if duration is not None and not duration > 0:
        raise ConfigError("--duration must be positive (seconds)")
    if num is None and duration is None:
        num = natural_size or 100
    warmup = options.warmup
    sweep = options.sweep
    common = {"num_requests": num, "duration_s": duration}

    def warm(width: int | None) -> int:
        return int(warmup) if warmup is not None else max(1, min(width or 1, 4))

    if sweep:
        if rates:
            raise ConfigError("--sweep chooses its own rates; drop --request-rate")
        if len(concurrency) > 1:
            raise ConfigError("--sweep takes at most one --concurrency (the cap of its max-throughput level)")
        steps = options.sweep_steps
        if steps < 1:
            raise ConfigError("--sweep-steps must be at least 1")
        cap = concurrency[0] if concurrency else SWEEP_MAX_CONCURRENCY
        levels = [
            LoadLevel("sync", concurrency=1, warmup=warm(1), **common),
            LoadLevel("max", concurrency=cap, rate=math.inf, warmup=warm(cap), **common),
        ]
        levels += [
            LoadLevel(
                f"sweep-{k}", concurrency=cap, rate=None, burstiness=burstiness, warmup=warm(cap), **common
            )
            for k in range(1, steps + 1)
        ]
        return levels
    if rates:
        if len(concurrency) > 1:
            raise ConfigError("with --request-rate give at most one --concurrency (the in-flight cap)")
        cap = concurrency[0] if concurrency else None
        if cap is None and any(math.isinf(r) for r in rates) and duration is not None:
            raise ConfigError(
                "--request-rate inf with --duration needs --concurrency to bound requests in flight"
            )
        return [
            LoadLevel(
                _rate_name(r), concurrency=cap, rate=r, burstiness=burstiness, warmup=warm(cap or 1), **common
            )
            for r in rates
        ]
    concurrency = concurrency or [1]
    if len(set(concurrency)) != len(concurrency):
        raise ConfigError("--concurrency lists a value twice")
    return [LoadLevel(f"c{c}", concurrency=c, warmup=warm(c), **common) for c in concurrency]


#: the max-throughput level must beat the synchronous one by this factor for rates in between to mean anything
MIN_SWEEP_SPAN = 1.1


def sweep_rate(step: int, steps: int, sync_rps: float, max_rps: float) -> float | None:
    """The ``step``-th of ``steps`` rates evenly spaced strictly between the sync and max throughputs.

    None when max throughput is not clearly above synchronous (a server that answers one request at a
    time): every rate in between would be the same load.
    """
    if not (sync_rps > 0 and max_rps >= MIN_SWEEP_SPAN * sync_rps):
        return None
    return sync_rps + (max_rps - sync_rps) * step / (steps + 1)


def sustained_rates(timings: list[RequestTiming]) -> tuple[float, float] | None:
    """(offered, served) requests per second of a paced level, both free of the drain at its end.

    offered: the arrivals actually drawn, (n - 1) / send span. served: completions over the level's time
    less one median latency (the last answer of a server that keeps up lands about one latency after the
    last send; one that falls behind lands later and later).
    """
    measured = [t for t in timings if not t.warmup]
    done = [t for t in measured if t.ok and t.e2e_s is not None]
    starts = sorted(t.start_s for t in measured)
    if len(starts) < 2 or not done or starts[-1] <= starts[0]:
        return None
    offered = (len(starts) - 1) / (starts[-1] - starts[0])
    end = max(t.start_s + (t.e2e_s or 0.0) for t in done)
    median_e2e = statistics.median(t.e2e_s or 0.0 for t in done)
    window = max(end - starts[0] - median_e2e, starts[-1] - starts[0])
    return offered, (len(done) - 1) / window


def saturated(offered_rps: float, served_rps: float | None) -> bool:
    return served_rps is None or served_rps < SATURATION_RATIO * offered_rps


def max_error_rate(options: ServingOptions) -> float:
    """The --max-error-rate threshold (a share of measured requests, 0..1)."""
    value = options.max_error_rate
    if value is None:
        return MAX_ERROR_RATE
    rate = float(value)
    if not 0 <= rate < 1:
        raise ConfigError(
            f"--max-error-rate must be at least 0 and below 1 (a share of requests), got {value}"
        )
    return rate


def level_verdict(figures: LevelFigures, threshold: float) -> tuple[Status, dict[str, float], str | None]:
    """A level's status, its error and timeout rates, and why it failed.

    PASS when the share of measured requests that errored or timed out is at most ``threshold``; FAIL
    above it (a fast server that drops requests is not a passing one). A level with no measured request
    completed is not decided here (the caller records it as ERROR).
    """
    n = max(figures.requests, 1)
    rates = {"error_rate": figures.errors / n, "timeout_rate": figures.timeouts / n}
    failed = (figures.errors + figures.timeouts) / n
    if failed <= threshold:
        return Status.PASS, rates, None
    reason = (
        f"{figures.errors} error(s) and {figures.timeouts} timeout(s) in {figures.requests} requests "
        f"({failed:.1%}, above the --max-error-rate {threshold:.1%})"
    )
    return Status.FAIL, rates, reason


#: flags that only shape one workload's requests: given with another workload they would do nothing
_WORKLOAD_FLAGS = {"input_len": ("--input-len", "synthetic"), "output_len": ("--output-len", "synthetic")}


def check_workload_flags(workload: str, options: ServingOptions) -> None:
    """Refuse a flag the chosen workload would ignore, naming the flag and the workload it is for."""
    for key, (flag, owner) in _WORKLOAD_FLAGS.items():
        if getattr(options, key) is not None and workload != owner:
            raise ConfigError(f"{flag} shapes the {owner} workload only; the {workload} workload ignores it")
    if workload == "email-triage" and options.endpoint != "chat":
        raise ConfigError(
            "--endpoint completions: the email-triage workload sends chat messages (its prompt is a chat "
            "turn); use --endpoint chat, or --workload synthetic/dataset"
        )
