"""Judge calibration: grade every labelled control N times with the judge prompts alone and measure the judge.

records = await run_controls(load_controls(dir), {"local/smollm2": model}, repeats=3)

Each judging goes through the benchmark's own path: :func:`judge_view` (the generic judge and its one retry
rule) on the control's :class:`JudgeView`, then :func:`derive` with the control's code checks.

Only the controls **the judge decides** measure it: a control where a code check failed is FAIL whatever the
judge answers, so counting it would lend the judge agreement it did not earn (a judge that passes everything
would agree on every one). Those are reported apart (their count, and how often the derived verdict matched).
Measured per judge model over the judge-decided controls: agreement with the labels (over every judging;
overall, on PASS controls and on FAIL controls, so a judge that passes everything is caught), Cohen's kappa
with the labels, self-consistency (share of controls whose N verdicts all match); over all controls: the
spread of each dimension's score over the repeats (mean standard deviation), whether a FAIL verdict named the
labelled failing dimension, and kappa between judges. An answer still unparseable after the retries is an
``ERROR`` verdict: a disagreement, and a control with one is not self-consistent. The judge passes at
:data:`MIN_AGREEMENT` agreement (overall and per label) and :data:`MIN_CONSISTENCY` self-consistency.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.evals.agent._controls_load import Control, controls_digest
from assay.evals.agent._judge_answer import JudgeAnswer
from assay.evals.agent._judge_view import judge_prompt_digest, judge_view
from assay.evals.agent._rubric import (
    DIMENSION_NAMES,
    MIN_CORE,
    RUBRIC_VERSION,
    ZERO_RULE_NAMES,
    rubric_digest,
)
from assay.evals.agent._verdict import derive
from assay.judge import UNUSABLE, Judge, JudgeOutcome, agreement, cohen_kappa, consistent, self_consistency
from assay.models import ChatModel, Usage

__all__ = [
    "CONTROLS_JSON",
    "CONTROLS_SCHEMA_VERSION",
    "MIN_AGREEMENT",
    "MIN_CONSISTENCY",
    "ControlResult",
    "ControlsRun",
    "JudgeRecord",
    "Judging",
    "KappaPair",
    "iter_records",
    "judge_record",
    "run_controls",
]

#: 2: agreement, kappa and self-consistency over the judge-decided controls only
CONTROLS_SCHEMA_VERSION = 2
#: the file of a controls run in its ``results/controls-agent-<UTC>/`` folder
CONTROLS_JSON = "controls.json"
MIN_AGREEMENT = 0.90
MIN_CONSISTENCY = 0.90
#: characters of the judge's last raw reply kept per judging
RAW_CAP = 1500

Verdict = Literal["PASS", "FAIL", "ERROR"]
Progress = Callable[[int, int], None]


class Judging(BaseModel):
    """One grading of one control: the verdict re-derived from the judge's answer (ERROR: unusable)."""

    repeat: int
    verdict: Verdict
    #: the judge's own PASS/FAIL (None when unusable), and whether it follows from its own scores and findings
    judge_said: str | None = None
    judge_consistent: bool | None = None
    #: FAIL controls: the answer named the labelled failing dimension (score < MIN_CORE) or zero rule
    flagged: bool | None = None
    #: per turn: the judge's scores
    scores: list[dict[str, int | None]] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    parse_error: str | None = None
    calls: int = 0
    raw: str = ""


class ControlResult(BaseModel):
    id: str
    label: Literal["PASS", "FAIL"]
    case: str
    failing_dimension: str | None = None
    failing_turn: int | None = None
    decided_by_code: bool = False
    judgings: list[Judging]
    #: judgings whose verdict is the label
    agreed: int
    #: every judging usable and all verdicts equal
    consistent: bool
    #: per dimension: mean standard deviation of its score over the repeats (over turns scored twice or more)
    spread: dict[str, float | None] = Field(default_factory=dict)


class JudgeRecord(BaseModel):
    """One judge model's calibration on one rubric version, judge prompt and control set."""

    judge_model: str
    rubric_version: str = RUBRIC_VERSION
    #: :func:`assay.evals.agent._rubric.rubric_digest` (None in records written before it was kept)
    rubric_digest: str | None = None
    judge_prompt_digest: str
    controls_digest: str
    repeats: int
    n_controls: int
    n_judgings: int
    #: controls no code check decides (what agreement, kappa and self-consistency are over), by label
    judge_decided_pass: int = 0
    judge_decided_fail: int = 0
    #: judgings of the judge-decided controls
    judge_decided_judgings: int = 0
    agreement: float
    agreement_pass: float | None
    agreement_fail: float | None
    self_consistency: float
    #: the derived verdict's agreement on the controls a failed code check decides (not the judge's merit:
    #: below 1 only when an answer was unusable); None when there are none
    code_decided_agreement: float | None = None
    #: judgings with no usable answer after the retries (counted as disagreements)
    unparseable: int
    #: the judge's own PASS/FAIL against the labels (not what decides: the verdict is re-derived)
    own_verdict_agreement: float | None = None
    #: judgings whose own verdict contradicts the judge's own scores and findings (on controls no code
    #: check decides: where one failed, a FAIL over good scores is the judge reading the checks)
    self_contradictions: int = 0
    #: judge calls beyond one per judging (answers that had to be retried)
    retried_calls: int
    #: FAIL judgings of FAIL controls that named the labelled failing dimension / all judgings of FAIL controls
    flagged_rate: float | None
    flagged_by_dimension: dict[str, float] = Field(default_factory=dict)
    dimension_spread: dict[str, float | None] = Field(default_factory=dict)
    #: Cohen's kappa of the verdicts with the labels over the judge-decided controls
    kappa_vs_labels: float | None = None
    #: controls a failed code check decides whatever the judge answers (outside agreement and kappa)
    decided_by_code: int = 0
    #: the judge's decoding was held to the answer's JSON schema (as ``eval agent`` does for local models)
    constrained: bool = False
    #: sampling temperature of the judge's calls (0, as ``eval agent`` judges: then only a nondeterministic
    #: backend can be self-inconsistent)
    temperature: float = 0.0
    #: the most tokens one judge call may write (None: the backend's own limit)
    max_tokens: int | None = None
    usage: Usage = Field(default_factory=Usage)
    elapsed_s: float = 0.0
    passed: bool
    #: each measure below its threshold, in words
    below: list[str] = Field(default_factory=list)
    controls: list[ControlResult] = Field(default_factory=list)


class KappaPair(BaseModel):
    a: str
    b: str
    #: None when undefined (both judges gave one and the same verdict throughout)
    kappa: float | None
    observed: float
    n: int


class ControlsRun(BaseModel):
    schema_version: int = CONTROLS_SCHEMA_VERSION
    created_at: str
    command_line: list[str] = Field(default_factory=list)
    controls_dir: str = ""
    thresholds: dict[str, float] = Field(
        default_factory=lambda: {"agreement": MIN_AGREEMENT, "self_consistency": MIN_CONSISTENCY}
    )
    judges: list[JudgeRecord]
    kappa: list[KappaPair] = Field(default_factory=list)
    passed: bool


def _flagged(control: Control, outcome: JudgeOutcome[JudgeAnswer]) -> bool | None:
    if control.label != "FAIL" or outcome.answer is None:
        return None
    dim = control.failing_dimension
    turns = [
        t for t in outcome.answer.turns if control.failing_turn is None or t.turn == control.failing_turn
    ]
    if dim in ZERO_RULE_NAMES:
        return any(f.rule == dim for t in turns for f in t.findings)
    return any((s := t.scores.get(dim or "")) is not None and s < MIN_CORE for t in turns)


def _judging(control: Control, repeat: int, outcome: JudgeOutcome[JudgeAnswer]) -> Judging:
    raw = outcome.raw[-1] if outcome.raw else ""
    base = Judging(
        repeat=repeat,
        verdict=UNUSABLE,
        parse_error=outcome.error,
        calls=outcome.calls,
        raw=raw if len(raw) <= RAW_CAP else raw[:RAW_CAP] + " [...]",
    )
    if outcome.answer is None:
        return base
    judgement = derive(outcome.answer, control.checks, len(control.turns))
    base.verdict = "PASS" if judgement.passed else "FAIL"
    base.judge_said = judgement.judge_said
    base.judge_consistent = judgement.judge_consistent
    if control.label == "FAIL":  # a PASS verdict on a FAIL control named nothing
        base.flagged = base.verdict == "FAIL" and bool(_flagged(control, outcome))
    base.scores = [dict(t.scores) for t in outcome.answer.turns]
    base.findings = [f"turn {t.turn}: {f.rule}" for t in outcome.answer.turns for f in t.findings]
    return base


def _spread(judgings: Sequence[Judging], n_turns: int) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    usable = [j for j in judgings if j.verdict != UNUSABLE]
    for dim in DIMENSION_NAMES:
        stdevs = []
        for t in range(n_turns):
            values = [j.scores[t][dim] for j in usable if j.scores[t].get(dim) is not None]
            if len(values) >= 2:
                stdevs.append(statistics.pstdev(values))  # type: ignore[arg-type]
        out[dim] = round(statistics.fmean(stdevs), 4) if stdevs else None
    return out


def _control_result(control: Control, judgings: list[Judging]) -> ControlResult:
    return ControlResult(
        id=control.id,
        label=control.label,
        case=control.case,
        failing_dimension=control.failing_dimension,
        failing_turn=control.failing_turn,
        decided_by_code=control.decided_by_code,
        judgings=sorted(judgings, key=lambda j: j.repeat),
        agreed=sum(j.verdict == control.label for j in judgings),
        consistent=consistent([j.verdict for j in judgings]),
        spread=_spread(judgings, len(control.turns)),
    )


def _share(results: Sequence[ControlResult]) -> float | None:
    return agreement(
        [r.label for r in results for _ in r.judgings], [j.verdict for r in results for j in r.judgings]
    )


def judge_record(
    judge_model: str,
    results: Sequence[ControlResult],
    controls: Sequence[Control],
    repeats: int,
    usage: Usage | None = None,
    elapsed_s: float = 0.0,
    constrained: bool = False,
    temperature: float = 0.0,
    max_tokens: int | None = None,
) -> JudgeRecord:
    """Fold one judge's control results into its measures and its pass/fail on the thresholds (agreement,
    kappa and self-consistency over the controls the judge decides: see the module docstring)."""
    judgings = [j for r in results for j in r.judgings]
    decided = [r for r in results if not r.decided_by_code]
    by_code = [r for r in results if r.decided_by_code]
    agreement = _share(decided) or 0.0
    on_pass = _share([r for r in decided if r.label == "PASS"])
    on_fail = _share([r for r in decided if r.label == "FAIL"])
    consistency = self_consistency([[j.verdict for j in r.judgings] for r in decided])
    fail_judgings = [(r, j) for r in results if r.label == "FAIL" for j in r.judgings]
    by_dim: dict[str, list[bool]] = {}
    for r, j in fail_judgings:
        by_dim.setdefault(r.failing_dimension or "", []).append(bool(j.flagged))
    flagged = [f for fs in by_dim.values() for f in fs]
    spread: dict[str, float | None] = {}
    for dim in DIMENSION_NAMES:
        values = [v for r in results if (v := r.spread.get(dim)) is not None]
        spread[dim] = round(statistics.fmean(values), 4) if values else None
    labels = [r.label for r in decided for _ in r.judgings]
    verdicts = [j.verdict for r in decided for j in r.judgings]
    kappa = cohen_kappa(labels, verdicts)[0] if labels else None
    below: list[str] = []
    if not decided:
        below.append("no control is decided by the judge: nothing measures it")
    for name, value in (("agreement", agreement), ("PASS-agreement", on_pass), ("FAIL-agreement", on_fail)):
        if value is not None and value < MIN_AGREEMENT:
            below.append(f"{name} {value:.2f} < {MIN_AGREEMENT:.2f}")
    if consistency < MIN_CONSISTENCY:
        below.append(f"self-consistency {consistency:.2f} < {MIN_CONSISTENCY:.2f}")
    return JudgeRecord(
        judge_model=judge_model,
        rubric_digest=rubric_digest(),
        judge_prompt_digest=judge_prompt_digest(),
        controls_digest=controls_digest(controls),
        repeats=repeats,
        n_controls=len(results),
        n_judgings=len(judgings),
        judge_decided_pass=sum(r.label == "PASS" for r in decided),
        judge_decided_fail=sum(r.label == "FAIL" for r in decided),
        judge_decided_judgings=len(labels),
        agreement=agreement,
        agreement_pass=on_pass,
        agreement_fail=on_fail,
        self_consistency=consistency,
        code_decided_agreement=_share(by_code),
        unparseable=sum(j.verdict == UNUSABLE for j in judgings),
        own_verdict_agreement=round(
            sum(j.judge_said == r.label for r in results for j in r.judgings) / len(judgings), 4
        )
        if judgings
        else None,
        self_contradictions=sum(
            j.judge_consistent is False for r in results if not r.decided_by_code for j in r.judgings
        ),
        retried_calls=sum(max(j.calls - 1, 0) for j in judgings),
        flagged_rate=round(sum(flagged) / len(flagged), 4) if flagged else None,
        flagged_by_dimension={d: round(sum(fs) / len(fs), 4) for d, fs in sorted(by_dim.items())},
        dimension_spread=spread,
        kappa_vs_labels=None if kappa is None else round(kappa, 4),
        decided_by_code=sum(r.decided_by_code for r in results),
        constrained=constrained,
        temperature=temperature,
        max_tokens=max_tokens,
        usage=usage or Usage(),
        elapsed_s=round(elapsed_s, 3),
        passed=not below,
        below=below,
        controls=list(results),
    )


async def _judge_all(
    controls: Sequence[Control],
    model: ChatModel,
    repeats: int,
    retries: int,
    constrained: bool,
    temperature: float,
    max_tokens: int | None,
    max_concurrency: int,
    on_progress: Progress | None,
    done: list[int],
    total: int,
) -> tuple[list[ControlResult], Usage]:
    options: dict[str, Any] = {"temperature": temperature}
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    judge = Judge(model, retries=retries, constrained=constrained, options=options)
    slots = asyncio.Semaphore(max_concurrency)
    views = {c.id: c.view() for c in controls}

    async def one(control: Control, repeat: int) -> tuple[str, Judging, Usage]:
        async with slots:
            outcome = await judge_view(judge, views[control.id])
        done[0] += 1
        if on_progress is not None:
            on_progress(done[0], total)
        return control.id, _judging(control, repeat, outcome), outcome.usage

    tasks = [one(c, r) for c in controls for r in range(1, repeats + 1)]
    finished = await asyncio.gather(*tasks)
    usage = Usage()
    by_control: dict[str, list[Judging]] = {c.id: [] for c in controls}
    for cid, judging, spent in finished:
        by_control[cid].append(judging)
        usage = usage + spent
    return [_control_result(c, by_control[c.id]) for c in controls], usage


async def run_controls(
    controls: Sequence[Control],
    judges: Mapping[str, ChatModel],
    *,
    repeats: int = 3,
    retries: int = 2,
    constrained: Mapping[str, bool] | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    max_concurrency: int = 4,
    on_progress: Progress | None = None,
    command_line: Sequence[str] = (),
    controls_dir: str = "",
) -> ControlsRun:
    """Judge every control ``repeats`` times with each judge model and measure each judge.

    ``constrained`` names the judges whose decoding is held to the answer's schema (``Judge(constrained=)``);
    ``temperature`` and ``max_tokens`` go to every judge call (0 and the judge's cap: as ``eval agent`` judges).
    An :class:`~assay.errors.InfraError` of a judge model propagates (nothing is measured on an outage).
    """
    if repeats < 2:
        raise ValueError(f"self-consistency needs at least 2 repeats, got {repeats}")
    if not controls or not judges:
        raise ValueError("run_controls needs at least one control and one judge model")
    total = len(controls) * repeats * len(judges)
    done = [0]
    records: list[JudgeRecord] = []
    for name, model in judges.items():
        start = time.perf_counter()
        held = bool((constrained or {}).get(name, False))
        results, usage = await _judge_all(
            controls,
            model,
            repeats,
            retries,
            held,
            temperature,
            max_tokens,
            max_concurrency,
            on_progress,
            done,
            total,
        )
        elapsed = time.perf_counter() - start
        records.append(
            judge_record(name, results, controls, repeats, usage, elapsed, held, temperature, max_tokens)
        )
    return ControlsRun(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        command_line=list(command_line),
        controls_dir=controls_dir,
        judges=records,
        kappa=_pairwise_kappa(records),
        passed=all(r.passed for r in records),
    )


def _pairwise_kappa(records: Sequence[JudgeRecord]) -> list[KappaPair]:
    """Cohen's kappa between every two judges over the same (control, repeat) verdicts."""

    def ratings(r: JudgeRecord) -> list[str]:
        return [j.verdict for c in sorted(r.controls, key=lambda c: c.id) for j in c.judgings]

    pairs: list[KappaPair] = []
    for i, a in enumerate(records):
        for b in records[i + 1 :]:
            ra, rb = ratings(a), ratings(b)
            kappa, observed = cohen_kappa(ra, rb)
            pairs.append(
                KappaPair(
                    a=a.judge_model,
                    b=b.judge_model,
                    kappa=None if kappa is None else round(kappa, 4),
                    observed=round(observed, 4),
                    n=len(ra),
                )
            )
    return pairs


def iter_records(results_dir: Path) -> Iterator[tuple[str, JudgeRecord]]:
    """Every judge record under ``results_dir/controls-*`` with its run's creation time (damaged files skipped)."""
    for path in sorted(results_dir.glob(f"controls-*/{CONTROLS_JSON}")):
        try:
            run = ControlsRun.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # a damaged or foreign file is not a calibration
        for r in run.judges:
            yield run.created_at, r
