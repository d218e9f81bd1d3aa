"""Latency samples of serving runs (``results.json``, read by the serving benchmark's own reader), and their
CDFs: per level on the case page, all levels on the run page, baseline against current on compare."""

from __future__ import annotations

from pydantic import ValidationError

from ._html import e
from ._store import Run
from ._svg import cdf_chart

#: request fields of a measured request, in seconds -> label
LATENCIES = {"ttft_s": "TTFT", "e2e_s": "E2E", "tpot_s": "TPOT"}


def latencies(run: Run) -> dict[tuple[str, int], dict[str, list[float]]]:
    """Per (level, iteration): milliseconds of each latency over its measured, successful requests (and ITL)."""
    from assay.evals.serving import read_results

    if (run.path / "results.json").is_symlink():
        return {}
    try:
        results = read_results(run.path)
    except (ValidationError, ValueError, OSError):
        return {}
    out: dict[tuple[str, int], dict[str, list[float]]] = {}
    for level in results.levels if results is not None else []:
        reqs = [r for r in level.requests if not r.get("warmup") and r.get("ok")]
        ms = {
            label: [1000 * r[k] for r in reqs if isinstance(r.get(k), int | float)]
            for k, label in LATENCIES.items()
        }
        ms["ITL"] = [1000 * x for r in reqs for x in r.get("itl_s") or []]
        out[(level.case_id, level.iteration)] = ms
    return out


def run_latency_plots(run: Run) -> str:
    """TTFT and E2E CDFs with one line per level (first iteration)."""
    lat = {cid: ms for (cid, it), ms in latencies(run).items() if it == 0}
    if not lat:
        return ""
    return "<h2>Latency by level</h2>" + "".join(
        cdf_chart({cid: ms[name] for cid, ms in lat.items()}, f"{name} CDF by level", "ms")
        for name in ("TTFT", "E2E")
    )


def compare_latency_plots(base: Run, cur: Run) -> str:
    """For each level both runs measured: TTFT and E2E of the baseline against the current run."""
    b, c = latencies(base), latencies(cur)
    common = sorted(k for k in b if k in c and k[1] == 0)
    parts = []
    for key in common:
        for name in ("TTFT", "E2E"):
            chart = cdf_chart(
                {f"baseline {name}": b[key][name], f"current {name}": c[key][name]}, f"{key[0]} {name}", "ms"
            )
            parts.append(f"<figure>{chart}<figcaption>level {e(key[0])}: {name}</figcaption></figure>")
    return "<h2>Where latency went</h2>" + "".join(parts) if parts else ""
