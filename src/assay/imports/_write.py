"""Write an imported result as an assay run directory, with the engine's own fold, gate and report writers."""

from __future__ import annotations

import importlib
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from assay import __version__
from assay._util import Scrubber
from assay.errors import ConfigError
from assay.exec import RunResult, finish
from assay.gate import GateOptions
from assay.imports._bench import ImportedRun
from assay.imports._model import Imported, digest
from assay.runs import Journal, RunMeta
from assay.runs.provenance import machine
from assay.runs.rundir import JOURNAL, META, new_run_dir, write_model

#: the tools ``assay import`` reads -> the reader of their result (imported when used)
READERS: dict[str, str] = {
    "inspect": "assay.imports._inspect:read_inspect",
    "swebench": "assay.imports._swebench:read_swebench",
    "promptfoo": "assay.imports._promptfoo:read_promptfoo",
    "lm-eval": "assay.imports._lmeval:read_lmeval",
    "tau2": "assay.imports._tau2:read_tau2",
}
TOOLS: tuple[str, ...] = tuple(READERS)
#: the tools whose pass is a numeric score held to a line (``--pass-threshold`` moves it); the others record
#: a pass of their own (SWE-bench's resolved, promptfoo's assertions)
NUMERIC_PASS: tuple[str, ...] = ("inspect", "lm-eval", "tau2")


def read_foreign(tool: str, paths: Sequence[Path | str], *, pass_threshold: float | None = None) -> Imported:
    """Read one result of ``tool`` (nothing is written); a bad file is a ConfigError naming it (exit 1).

    ``pass_threshold``: the score at or above which an attempt passes, for the tools in :data:`NUMERIC_PASS`
    (a ConfigError for the others, whose results say pass or fail themselves)."""
    if tool not in READERS:
        raise ConfigError(f"unknown tool {tool!r}; expected one of {', '.join(TOOLS)}", path="TOOL")
    if pass_threshold is not None and not math.isfinite(pass_threshold):
        raise ConfigError(f"{pass_threshold}: not a number a score can reach", path="--pass-threshold")
    if pass_threshold is not None and tool not in NUMERIC_PASS:
        raise ConfigError(
            f"{tool} records its own pass or fail, with no score to hold to a threshold; it applies to "
            f"{', '.join(NUMERIC_PASS)}",
            path="--pass-threshold",
        )
    files = [Path(p) for p in paths]
    for f in files:
        if not f.is_file():
            raise ConfigError("no such file", path=str(f))
    module, _, attr = READERS[tool].partition(":")
    reader: Callable[..., Imported] = getattr(importlib.import_module(module), attr)
    if tool not in NUMERIC_PASS:
        return reader(files)
    imp = reader(files, pass_threshold=pass_threshold)
    if pass_threshold is not None:  # another line of pass is another measure: it compares only with its own
        imp.task_version += f"; pass at score >= {pass_threshold:g}"
        imp.provenance["pass_threshold"] = pass_threshold
    return imp


def import_run(
    tool: str,
    paths: Sequence[Path | str],
    out: Path | None = None,
    *,
    results_dir: Path = Path("results"),
    gate: GateOptions | None = None,
    detect: float | None = None,
    pass_threshold: float | None = None,
    command_line: list[str] | None = None,
) -> RunResult:
    """Turn one result of another tool into a run directory (meta.json, results.jsonl, scorecard.json,
    reports) that every command reading runs takes unchanged. The file is read whole before anything is
    written; the run id is the tool, the task and a digest of the file, so an import of the same file is
    the same run. ``detect``: a change the report says how many items would be needed to see;
    ``pass_threshold``: the score at or above which an attempt passes (recorded in meta.json)."""
    files = [Path(p) for p in paths]
    imp = read_foreign(tool, files, pass_threshold=pass_threshold)
    bench = ImportedRun(
        {
            "tool": imp.tool,
            "source": [str(f) for f in files],
            "task": imp.task,
            "task_version": imp.task_version,
            "model": imp.model,
            "subject": imp.subject,
            "scorers": imp.scorers,
            "cases": [[cid, cat] for cid, cat in imp.cases],
            "metrics": [s.model_dump() for s in imp.metric_specs],
            "run_metrics": {k: v.model_dump() for k, v in imp.run_metrics.items()},
            "status": imp.status,
            "notes": imp.notes,
            "no_items": imp.no_items,
        }
    )
    suite = bench.load_suite(imp.task)
    ids = suite.case_ids()
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(f"sample id {dup!r} appears twice", path=str(files[0]))
    safe_task = re.sub(r"[^\w.-]+", "_", imp.task).strip("_") or imp.tool
    run_dir = new_run_dir(results_dir, f"import-{imp.tool}", safe_task, out)
    m = machine()
    meta = RunMeta(
        run_id=f"{imp.tool}-{safe_task}-{digest(files)}",
        benchmark=f"import-{imp.tool}",
        suite=imp.task,
        suite_version=imp.task_version,
        assay_version=__version__,
        hostname=str(m["hostname"]),
        os=str(m["os"]),
        cpu_count=int(m["cpu_count"]),
        python=str(m["python"]),
        command_line=list(command_line if command_line is not None else sys.argv),
        config=bench.subject_config(),
        options={
            "benchmark": bench.options.model_dump(mode="json"),
            "benchmark_class": f"{ImportedRun.__module__}:{ImportedRun.__qualname__}",
            "import": {
                "tool_version": imp.tool_version,
                "imported_at": datetime.now(UTC).isoformat(),
                **imp.provenance,
            },
        },
        iterations=imp.iterations,
        case_ids=ids,
        started_at=imp.started_at,
        finished_at=imp.finished_at,
        elapsed_s=(imp.finished_at - imp.started_at).total_seconds() if imp.finished_at else None,
    )
    scrubber = Scrubber()
    write_model(run_dir / META, meta, scrubber)
    with Journal(run_dir / JOURNAL, scrubber) as journal:
        for attempt in imp.attempts:
            journal.append(attempt)
    if detect is not None:  # as `assay eval --detect`: the report says the items the change needs
        gate = replace(gate or GateOptions(), detect=detect)
    done = finish(run_dir, bench, suite, meta, scrubber, gate=gate)
    return RunResult(
        run_dir, done.scorecard, done.verdict, benchmark=bench, meta=meta, attempts=done.attempts
    )
