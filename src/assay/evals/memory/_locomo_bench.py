"""``--dataset locomo``: each LoCoMo question a case, graded on evidence recall, token F1 and a judge.

Per question: **evidence recall@5/@10** (the share of the turns holding the answer behind the memories
recall ranks first: no model needed), and with ``--model`` the answer's **token F1** (the LoCoMo paper's
score; adversarial questions by its not-mentioned rule) and with ``--judge-model`` the **judge's
CORRECT/WRONG** with its reason (as Mem0 reports LoCoMo, categories 1-4). A case passes on the judge's
verdict when there is one, else on F1 >= 0.5 with an answer, else on every evidence turn in the top 10.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.evals._suite_id import suite_version
from assay.evals.memory._fetch import fetch_locomo
from assay.evals.memory._grading import CATEGORIES, judge_locomo, locomo_f1
from assay.evals.memory._locomo import LocomoConversation, load_locomo, sample_locomo
from assay.evals.memory._locomo_run import (
    KS,
    Plan,
    answer,
    duration,
    evidence_ranking,
    full_plan,
    question_details,
    recall_at,
    replay,
)
from assay.exec import AttemptContext, Case, Outcome, Suite
from assay.intervals import bootstrap_interval, wilson_interval
from assay.memory import Memory, MemoryConfig
from assay.runs import Attempt, MetricValue, Scorecard, Status, Usage

if TYPE_CHECKING:
    from assay.evals.memory._options import MemoryOptions
    from assay.judge import Judge

__all__ = ["LOCOMO_METRICS", "PUBLISHED", "LocomoMixin", "locomo_path"]

#: per-question metrics (the names the report and the per-category metrics use)
LOCOMO_METRICS = ("evidence_recall@5", "evidence_recall@10", "locomo_f1", "judge_accuracy")
#: published LLM-judge accuracy on LoCoMo categories 1-4 (Mem0, arXiv:2504.19413; answer and judge
#: model gpt-4o-mini for every system)
PUBLISHED = {
    "source": "Mem0 paper (arXiv:2504.19413), LLM-judge accuracy on categories 1-4",
    "model": "gpt-4o-mini",
    "judge": "gpt-4o-mini",
    "figures": {"Mem0": 66.9, "Mem0 (graph)": 68.5, "LangMem": 58.1, "OpenAI memory": 52.9},
}
F1_PASS = 0.5
#: what the answer model is shown: the best items and past turns for the question
LOCOMO_CONFIG = MemoryConfig(recall_items=10, recall_turns=10)


def locomo_path(spec: str, *, offline: bool) -> Path:
    """``locomo:FILE`` is that file; ``locomo`` the pinned published file (fetched once, checked)."""
    kind, sep, path = spec.partition(":")
    if kind != "locomo":
        raise ConfigError(f"--dataset {spec!r}: expected locomo:FILE or locomo")
    return Path(path) if sep and path else fetch_locomo(offline=offline)


class LocomoMixin:
    """The LoCoMo half of :class:`~assay.evals.memory.MemoryBenchmark`."""

    options: MemoryOptions
    _run_dir: Path
    _embedder: Any
    _model: Any

    def _locomo_init(self) -> None:
        self._conversations: dict[str, LocomoConversation] = {}
        self._memories: dict[tuple[str, int], Memory] = {}
        self._replay_locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._replay_seconds: dict[str, float] = {}
        self._judge: Judge | None = None
        self._plan: Plan | None = None

    def _locomo_suite(self, spec: str) -> Suite:
        o = self.options
        if o.retrieval_only and (o.model or o.judge_model):
            raise ConfigError("--retrieval-only asks no model: drop --model/--judge-model")
        if o.judge_model and not o.model:
            raise ConfigError("--judge-model grades answers: it needs --model to answer")
        path = locomo_path(spec, offline=o.offline)
        convs = sample_locomo(
            load_locomo(path), conversations_n=o.conversations, questions_n=o.questions, seed=o.sample_seed
        )
        self._conversations = {c.sample_id: c for c in convs}
        cases = [
            Case(
                id=q.id,
                category=q.category_name,
                input={"conversation": c.sample_id, "index": q.index},
                tags=["locomo", c.sample_id],
            )
            for c in convs
            for q in c.questions
        ]
        sampling = {"conversations": o.conversations, "questions": o.questions, "seed": o.sample_seed}
        return Suite(
            name="locomo", version=suite_version("locomo", cases, files=[path], extra=sampling), cases=cases
        )

    def _locomo_plan(self) -> Plan:
        """The calls this run makes (a model answers, a judge grades, only when named)."""
        plan = full_plan(list(self._conversations.values()), judging=bool(self.options.judge_model))
        if not self.options.model:
            plan.extraction = plan.answering = False
        return plan

    async def _locomo_preflight(self) -> None:
        self._plan = self._locomo_plan()
        secs = self.options.call_seconds
        if self.options.retrieval_only:
            full = full_plan(list(self._conversations.values()), judging=True)
            line = (
                "LoCoMo --retrieval-only: no model calls now. A full answer run (extraction, answers, judge) "
                f"would need: {full.describe(secs).removeprefix('LoCoMo: ')}, plus the replay"
            )
        elif self.options.model:
            line = self._plan.describe(secs)
        else:
            line = self._plan.describe() + " (no --model: evidence recall only)"
        print(line, file=sys.stderr, flush=True)

    async def _locomo_memory(
        self, conv: LocomoConversation, ctx: AttemptContext
    ) -> tuple[Memory, Usage | None]:
        key = (conv.sample_id, ctx.iteration)
        lock = self._replay_locks.setdefault(key, asyncio.Lock())
        async with ctx.exclusive(lock):
            if key not in self._memories:
                db = self._run_dir / "memory" / f"locomo-{conv.sample_id}-i{ctx.iteration}.db"
                db.parent.mkdir(parents=True, exist_ok=True)
                model = None if self.options.retrieval_only else self._model
                t0 = time.perf_counter()
                memory = await replay(conv, db, embedder=self._embedder, model=model, config=LOCOMO_CONFIG)
                self._replay_seconds[f"{conv.sample_id}-i{ctx.iteration}"] = time.perf_counter() - t0
                self._memories[key] = memory
                # the question that ran the replay carries its cost
                return memory, memory.usage if memory.usage.calls else None
        return self._memories[key], None

    async def _locomo_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        conv = self._conversations[case.input["conversation"]]
        q = next(x for x in conv.questions if x.index == case.input["index"])  # noqa: RUF100
        memory, usage = await self._locomo_memory(conv, ctx)
        dias = conv.dia_ids()
        known = [e for e in q.evidence if e in dias]
        details = question_details(q, known, [e for e in q.evidence if e not in dias])
        metrics: dict[str, float] = {}
        if known:
            ranking = evidence_ranking(memory, q.question, max(KS))
            for k in KS:
                metrics[f"evidence_recall@{k}"] = recall_at(ranking, known, k)
            details["ranked_evidence"] = [sorted(r) for r in ranking]
        verdict: bool | None = None
        rule = "every evidence turn is behind the top 10 memories recalled"
        if self._model is not None and not self.options.retrieval_only:
            reply, shown, used = await answer(memory, conv, q, self._model, seed=self.options.sample_seed)
            usage = used if usage is None else usage + used
            f1 = locomo_f1(reply, q.answer, q.category)
            metrics["locomo_f1"] = f1
            details |= {"answer": reply, "shown": shown[:4000]}
            verdict, rule = f1 >= F1_PASS, f"token F1 >= {F1_PASS}"
            if q.category == 5:
                rule = "the answer says it was not mentioned (LoCoMo's adversarial rule)"
            elif self._judge is not None:
                judged = await judge_locomo(self._judge, q.question, q.answer, reply)
                usage = usage + judged.usage
                if judged.correct is None:
                    return Outcome(
                        status=Status.ERROR,
                        metrics=metrics,
                        details={**details, "judge_error": judged.error},
                        usage=usage,
                    )
                metrics["judge_accuracy"] = 1.0 if judged.correct else 0.0
                details["judge_label"] = "CORRECT" if judged.correct else "WRONG"
                details["judge_reason"] = judged.reason
                verdict, rule = judged.correct, "the judge labels the answer CORRECT"
        elif known:
            verdict = metrics["evidence_recall@10"] == 1.0
        if verdict is None:
            return Outcome.skipped(
                "the question names no evidence turn of its conversation and no model answers it"
            )
        details["pass_rule"] = rule
        score = metrics.get("judge_accuracy", metrics.get("locomo_f1", metrics.get("evidence_recall@10")))
        return Outcome(
            status=Status.PASS if verdict else Status.FAIL,
            score=score,
            metrics=metrics,
            details=details,
            usage=usage,
        )

    async def _locomo_teardown(self) -> None:
        for memory in self._memories.values():
            memory.store.close()
        self._memories.clear()

    def _locomo_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        """Each metric per category, over the questions (a question's repeats averaged first)."""
        per: dict[tuple[str, str], dict[str, list[float]]] = {}
        for a in attempts:
            if a.status not in (Status.PASS, Status.FAIL):
                continue
            for name in LOCOMO_METRICS:
                if name in a.metrics:
                    per.setdefault((name, a.category), {}).setdefault(a.case_id, []).append(a.metrics[name])
        out: dict[str, MetricValue] = {}
        for (name, cat), by_case in sorted(per.items()):
            values = [sum(v) / len(v) for v in by_case.values()]
            if name == "judge_accuracy":
                low, high = wilson_interval(round(sum(values)), len(values))
            else:
                low, high = bootstrap_interval(values)
            kind = "continuous" if name == "locomo_f1" else "proportion"
            out[f"{name}[{cat}]"] = MetricValue(
                value=sum(values) / len(values), low=low, high=high, n=len(values), kind=kind, gated=False
            )
        return out

    def _locomo_section(self, scorecard: Scorecard) -> str:
        m = scorecard.summary.metrics
        lines = ["## Memory: LoCoMo", ""]
        if self._plan is not None:
            lines.append(self._plan.describe(self.options.call_seconds) + ".")
        replayed = sum(self._replay_seconds.values())
        if self._replay_seconds:
            lines.append(
                f"Replay wall time (this run): {replayed:.1f} s over {len(self._replay_seconds)} conversation(s)."
            )
        if self.options.retrieval_only:
            full = full_plan(list(self._conversations.values()), judging=True)
            secs = self.options.call_seconds
            lines.append(
                f"A full answer run would need {full.total_calls:,} model calls "
                f"({', '.join(f'{n:,} {w}' for w, n in full.calls.items())}): about "
                f"{duration(full.total_calls * secs + replayed)} at an assumed {secs:g} s a call (--call-seconds), "
                "this replay's time included."
            )
        lines += [
            "",
            "| category | questions | evidence recall@5 | evidence recall@10 | token F1 | judge |",
            "|---|---|---|---|---|---|",
        ]
        cats = [c for c in CATEGORIES.values() if any(k.endswith(f"[{c}]") for k in m)]
        for cat in [*cats, None]:
            row = [cat or "**overall**"]
            n = 0
            for name in LOCOMO_METRICS:
                mv = m.get(f"{name}[{cat}]" if cat else name)
                n = max(n, mv.n if mv else 0)
                row.append(_cell(mv))
            lines.append(f"| {row[0]} | {n} | " + " | ".join(row[1:]) + " |")
        lines += ["", *self._published(m.get("judge_accuracy"))]
        return "\n".join(lines)

    def _published(self, judged: MetricValue | None) -> list[str]:
        figs = ", ".join(f"{k} {v:.1f}%" for k, v in PUBLISHED["figures"].items())  # type: ignore[attr-defined]
        out = [
            f"Published beside it: {PUBLISHED['source']}, answer model {PUBLISHED['model']}, judge "
            f"{PUBLISHED['judge']}: {figs}."
        ]
        model, judge = self.options.model, self.options.judge_model
        if judged is None or judged.value is None:
            out.append(
                "This run has no judge figure to set beside them (it needs --model and --judge-model)."
            )
        elif model == PUBLISHED["model"] and judge == PUBLISHED["judge"]:
            out.append(
                f"This run: {100 * judged.value:.1f}% with the same models named; prompts, retrieval depth and "
                "the memory itself still differ, so read it as a neighbour, not a replication."
            )
        else:
            out.append(
                f"This run: {100 * judged.value:.1f}% with answer model {model} and judge {judge}. Not "
                "like-for-like: the models differ from the published ones, so the gap says nothing about "
                "the memory alone."
            )
        return out


def _cell(mv: MetricValue | None) -> str:
    """A value in [0, 1] as a percentage with its 95% interval."""
    if mv is None or mv.value is None:
        return "-"
    if mv.low is None or mv.high is None:
        return f"{100 * mv.value:.1f}%"
    return f"{100 * mv.value:.1f}% [{100 * mv.low:.1f}, {100 * mv.high:.1f}]"
