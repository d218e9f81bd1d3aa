"""`assay eval retrieval --component rag`: document retrieval quality, answers, scale and hard cases.

Suites: ``pr`` (offline, deterministic: the labelled set committed in ``eval/retrieval/pr``, the hash
embedder, retrieval only, hard cases that need no model) and ``full`` (adds the pinned corpora of
``eval/retrieval/sources.json``, answers with ``--model`` and the scale tiers). ``--dataset beir:DIR``
runs any BEIR-format folder instead, scored with nDCG@10, recall@100 and MRR@10.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.embed import Embedder, get_embedder
from assay.errors import ConfigError, DocumentError, StopEarly
from assay.evals._suite_id import suite_version
from assay.evals.retrieval._options import RagOptions
from assay.evals.retrieval._rag_answers import grade_answer
from assay.evals.retrieval._rag_data import BeirDataset, RagDataset, load_beir, load_dataset, verify_labels
from assay.evals.retrieval._rag_fusion import doc_rankings
from assay.evals.retrieval._rag_hard import HARD_CASES, HardContext
from assay.evals.retrieval._rag_report import (
    PASS_RANK,
    failure_reason,
    recall_curve_plot,
    render_section,
    tag_metrics,
    tag_recall_plot,
)
from assay.evals.retrieval._rag_scale import (
    ScaleCorpus,
    beir_corpus,
    labelled_corpus,
    measure_tier,
    parse_tiers,
    tier_verdict,
)
from assay.evals.retrieval._rag_score import first_hit_rank, mrr_at_k, ndcg_at_k, rank_metrics, recall_at_k
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.models import ChatModel
from assay.rag import DocumentIndex, answer, query_documents
from assay.runs import MEASURED_STATUSES, Attempt, MetricSpec, MetricValue, Scorecard, Status, SubjectConfig

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = ["RagRetrievalBenchmark", "default_eval_dir"]

#: the least change of recall@5, MRR and R@returned that counts; the gate widens it by the binomial
#: noise of the questions (paired over the questions both runs answered)
GATE_TOLERANCE = 0.02


def default_eval_dir() -> Path:
    """``eval/retrieval`` of this checkout (or ``$ASSAY_EVAL_DIR/retrieval``)."""
    env = os.environ.get("ASSAY_EVAL_DIR")
    candidates = [Path(env) / "retrieval"] if env else []
    candidates += [
        Path(__file__).resolve().parents[4] / "eval" / "retrieval",
        Path.cwd() / "eval" / "retrieval",
    ]
    for c in candidates:
        if (c / "pr" / "dataset.json").is_file():
            return c
    raise ConfigError(
        "cannot find eval/retrieval/pr/dataset.json: run from the assay checkout or set ASSAY_EVAL_DIR"
    )


def _specs(tol: float) -> tuple[MetricSpec, ...]:
    """Every metric with its kind: per-question means of values in [0, 1] are proportions over the
    questions; chunk counts per question are continuous; documents and hard cases are counts."""
    gated = {"sdk_recall@5", "sdk_mrr", "agent_r_returned"}
    specs = [MetricSpec(name=m, kind="proportion", tolerance=tol, gated=m in gated) for m in
             ("sdk_recall@1", "sdk_recall@3", "sdk_recall@5", "sdk_recall@10", "sdk_recall@20", "sdk_mrr",
              "sdk_doc_recall@5", "agent_r_returned", "agent_doc_recall", "dense_recall@5", "bm25_recall@5")]  # fmt: skip
    specs += [
        MetricSpec(name="agent_returned", kind="continuous", direction="lower", gated=False, unit="chunks"),
        MetricSpec(
            name="docs_failed_to_index",
            kind="count",
            direction="lower",
            tolerance=0.0,
            gated=True,
            unit="documents",
        ),
        MetricSpec(name="hard_case_pass", kind="proportion", tolerance=0.0, gated=True),
        MetricSpec(name="hard_cases_passed", kind="count", tolerance=0.0, gated=True, unit="cases"),
        MetricSpec(name="duplicate_share_top5", kind="proportion", direction="lower", gated=False),
        MetricSpec(name="answer_accuracy", kind="proportion", tolerance=tol, gated=True),
        MetricSpec(name="answers_unscored", kind="count", direction="lower", gated=False),
        MetricSpec(name="ndcg@10", kind="proportion", tolerance=tol, gated=True),
        MetricSpec(name="recall@100", kind="proportion", tolerance=tol, gated=True),
        MetricSpec(name="mrr@10", kind="proportion", tolerance=tol, gated=True),
    ]
    return tuple(specs)


@dataclass
class _Collection:
    """One corpus with its index: the labelled set, or a BEIR dataset."""

    name: str
    labelled: RagDataset | None = None
    beir: BeirDataset | None = None
    index: DocumentIndex | None = None
    failed: dict[str, str] = field(default_factory=dict)
    #: documents indexed but flagged degraded (an image page unread, a truncated file), with why
    degraded: dict[str, str] = field(default_factory=dict)
    index_s: float = 0.0


class RagRetrievalBenchmark(Benchmark):
    """Document retrieval: recall@k, MRR, answer accuracy, scale tiers and hard cases."""

    name = "retrieval-rag"
    help = "Document retrieval (the assay.rag SDK): recall@k, MRR, nDCG, answers, scale, hard cases."
    suites = ("pr", "full")
    default_suite = "pr"
    #: indexing, search and scale tiers run in the event loop: --timeout is refused
    interruptible = False
    metric_specs = _specs(GATE_TOLERANCE)

    Options = RagOptions
    options: RagOptions

    def __init__(self, options: RagOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self._collections: dict[str, _Collection] = {}
        self._embedder: Embedder | None = None
        self._model: ChatModel | None = None
        self._judge: ChatModel | None = None
        self._suite = "pr"
        self._run_dir: Path | None = None
        self._notes: dict[str, str] = {}
        tol = self.options.tolerance
        self.metric_specs = _specs(GATE_TOLERANCE if tol is None else float(tol))  # type: ignore[misc]

    # ------------------------------------------------------------------------------------- options

    def _dataset_path(self) -> Path:
        dataset = self.options.dataset
        if dataset and not dataset.startswith("beir:"):
            path = Path(dataset)
            if not path.is_file():
                raise ConfigError(f"--dataset {dataset}: no such file")
            return path
        return default_eval_dir() / "pr" / "dataset.json"

    def _embedder_spec(self) -> str:
        return self.options.embedder or ("local" if self._suite == "full" else "hash")

    def _tiers(self) -> list[int]:
        raw = self.options.scale_tiers or ("10,100,1000" if self._suite == "full" else "")
        return parse_tiers(str(raw))

    def _scale_corpus(self) -> ScaleCorpus:
        """The run's first BEIR corpus where it has one, else the labelled documents (padded by distractors)."""
        for col in self._collections.values():
            if col.beir is not None:
                return beir_corpus(col.name, col.beir)
        col = self._collections["labelled"]
        assert col.labelled is not None
        return labelled_corpus(col.labelled)

    def subject_config(self) -> SubjectConfig:
        embedder = self._get_embedder()
        probe = DocumentIndex(embedder, cache_dir=None)
        return SubjectConfig(
            subject=f"assay.rag hybrid (FAISS + BM25, {probe.fusion} fusion)",
            model=self.options.model,
            judge_model=self.options.judge,
            embedder=embedder.id,
            extra={
                "chunking": probe.chunking.id,
                "fusion": probe.fusion,
                "alpha": probe.alpha,
                "fusion_rule": probe.fusion_rule,
                **({"ocr": True} if self.options.ocr else {}),
            },
        )

    def _get_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self._embedder_spec())
        return self._embedder

    # --------------------------------------------------------------------------------------- suite

    def load_suite(self, suite: str) -> Suite:
        if suite not in self.suites:
            raise ConfigError(f"--suite must be one of {', '.join(self.suites)}, not {suite!r}")
        if self.options.ocr and suite == "pr":
            raise ConfigError(
                "--ocr: the pr suite runs without OCR so every machine scores it alike; use --suite full"
            )
        self._suite = suite
        dataset = self.options.dataset or ""
        if dataset.startswith("beir:"):
            beir = load_beir(dataset[len("beir:") :])
            self._collections = {"beir": _Collection("beir", beir=beir)}
            cases = [Case(f"beir/{qid}", "beir", {"kind": "beir", "collection": "beir", "id": qid})
                     for qid in sorted(beir.qrels)]  # fmt: skip
            cases += [Case(f"scale/{t}", "scale", {"kind": "scale", "tier": t}) for t in self._tiers()]
            return Suite(f"{suite}-beir", suite_version("beir", cases, extra={"beir": beir.sha256}), cases)

        data = load_dataset(self._dataset_path())
        verify_labels(data)
        self._collections = {"labelled": _Collection("labelled", labelled=data)}
        cases = [
            Case(f"q/{q.id}", "question", {"kind": "question", "collection": "labelled", "id": q.id}, q.tags)
            for q in data.questions
        ]
        cases += [Case(f"hard/{name}", "hard", {"kind": "hard", "id": name}) for name in HARD_CASES]
        label, content = suite, {"dataset": [data.version, data.sha256]}
        if suite == "full":
            from assay.evals.retrieval._rag_sources import load_sources, prepare_sources

            if not self.options.model and not self.options.fetch_only:
                raise ConfigError(
                    "the full suite answers questions: pass --model (e.g. --model local/smollm2)"
                )
            sources = load_sources(default_eval_dir() / "sources.json")
            for name, beir in prepare_sources(sources, offline=self.options.offline).items():
                self._collections[name] = _Collection(name, beir=beir)
                cases += [Case(f"{name}/{qid}", "beir", {"kind": "beir", "collection": name, "id": qid})
                          for qid in sorted(beir.qrels)]  # fmt: skip
                label += f"+{name}"
                content[name] = [beir.sha256]
            if self.options.fetch_only:
                raise StopEarly(f"fetched and verified {len(self._collections) - 1} corpora (--fetch-only)")
        cases += [Case(f"scale/{t}", "scale", {"kind": "scale", "tier": t}) for t in self._tiers()]
        return Suite(suite, suite_version(label, cases, extra=content), cases)

    # ---------------------------------------------------------------------------------- lifecycle

    async def preflight(self) -> None:
        if self.options.ocr:
            from assay.rag.ocr import check_ocr

            check_ocr()  # a broken OCR stops the run here, before any image page is indexed as blank
        if self.options.model:
            from assay.models import get_model

            self._model = get_model(self.options.model)
        if self.options.judge:
            from assay.models import get_model

            self._judge = get_model(self.options.judge)

    async def setup(self, run_dir: str) -> None:
        import time

        self._run_dir = Path(run_dir)
        embedder = self._get_embedder()
        for col in self._collections.values():
            col.index = DocumentIndex(embedder, cache_dir=None, ocr=self.options.ocr)
            t0 = time.perf_counter()
            if col.labelled is not None:
                for d in col.labelled.documents:
                    try:
                        res = col.index.index_document(d.path, d.id)
                    except DocumentError as exc:
                        col.failed[d.id] = str(exc)
                        continue
                    if res.degraded:
                        col.degraded[d.id] = "; ".join(res.warnings) or "degraded"
            elif col.beir is not None:
                col.index.index_texts(
                    [(did, f"{t}\n\n{x}" if t else x) for did, (t, x) in col.beir.corpus.items()]
                )
            col.index.search("warm-up", k=1)
            col.index_s = time.perf_counter() - t0

    # --------------------------------------------------------------------------------------- cases

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        kind = case.input["kind"]
        if kind == "question":
            return await self._question(case)
        if kind == "beir":
            return self._beir_query(case)
        if kind == "hard":
            col = self._collections["labelled"]
            assert col.labelled is not None
            hctx = HardContext(
                col.labelled,
                self._get_embedder(),
                Path(ctx.run_dir) / "work" / "hard",
                default_eval_dir() / "pr" / "hard",
                self._model,
                ocr=self.options.ocr,
            )
            out = await HARD_CASES[case.input["id"]](hctx)
            self._notes[case.id] = (
                out.skip_reason or ", ".join(f"{k}={v}" for k, v in out.details.items())[:200]
            )
            return out
        if kind == "scale":
            metrics, details = measure_tier(
                int(case.input["tier"]), self._scale_corpus(), self._get_embedder(),
                Path(ctx.run_dir) / "work" / "scale",
            )  # fmt: skip
            passed, rule = tier_verdict(int(case.input["tier"]), metrics)
            self._notes[case.id] = str(details["corpus_text"])
            return Outcome(
                status=Status.PASS if passed else Status.FAIL,
                metrics=metrics,
                details={**details, "rule": rule},
            )
        raise ConfigError(f"unknown case kind {kind!r}")

    async def _question(self, case: Case) -> Outcome:
        col = self._collections[case.input["collection"]]
        assert col.labelled is not None and col.index is not None
        q = next(x for x in col.labelled.questions if x.id == case.input["id"])
        idx = col.index
        sdk = idx.search(q.question, k=20)
        sdk_rank = first_hit_rank([h.chunk for h in sdk], q)
        docs = list(dict.fromkeys(h.doc_id for h in sdk))
        metrics = rank_metrics("sdk", sdk_rank, docs, q)
        for mode in ("dense", "bm25"):
            ranked = idx.search(q.question, k=5, mode=mode)  # type: ignore[arg-type]
            rank = first_hit_rank([h.chunk for h in ranked], q)
            metrics[f"{mode}_recall@5"] = float(rank is not None)
        returned = query_documents(idx, q.question, max_chunks=8).hits
        agent_rank = first_hit_rank([h.chunk for h in returned], q)
        wanted = {e.doc for e in q.evidence}
        metrics["agent_r_returned"] = float(agent_rank is not None)
        metrics["agent_doc_recall"] = len(wanted & {h.doc_id for h in returned}) / len(wanted)
        metrics["agent_returned"] = float(len(returned))
        details: dict[str, Any] = {
            "tags": q.tags,
            "sdk_rank": sdk_rank,
            "agent_rank": agent_rank,
            "agent_returned": len(returned),
            "top5": [f"{h.doc_id}#{h.chunk.index}@p{h.chunk.page}" for h in sdk[:5]],
            # what the report names when the question fails
            "question": q.question,
            "evidence": [
                {"doc": e.doc, "page": e.page, "quote": (e.quote or "")[:200] or None} for e in q.evidence
            ],
        }
        usage = None
        if self._model is not None:
            got = await answer(idx, q.question, self._model)
            usage = got.usage
            in_context = first_hit_rank([h.chunk for h in got.context], q) is not None
            verdict, correct, judge_usage = await grade_answer(q, got.text, self._judge)
            if judge_usage is not None:
                usage = usage + judge_usage if usage else judge_usage
                details["judged"] = True
            if correct is not None:
                metrics["answer_accuracy"] = float(correct)
                if not correct:
                    verdict = "retrieval miss" if not in_context else "generation miss"
            details.update(answer=got.text[:500], verdict=verdict, evidence_in_context=in_context)
        status = Status.PASS if sdk_rank is not None and sdk_rank <= PASS_RANK else Status.FAIL
        return Outcome(status=status, score=metrics["sdk_mrr"], metrics=metrics, details=details, usage=usage)

    def _beir_query(self, case: Case) -> Outcome:
        col = self._collections[case.input["collection"]]
        assert col.beir is not None and col.index is not None
        qid = case.input["id"]
        query, qrels = col.beir.queries[qid], col.beir.qrels[qid]
        metrics: dict[str, float] = {}
        rankings = doc_rankings(col.index, query)
        for mode, prefix in (("hybrid", ""), ("dense", "dense_"), ("bm25", "bm25_")):
            ranking = rankings[mode]
            metrics[f"{prefix}ndcg@10"] = ndcg_at_k(ranking, qrels, 10)
            metrics[f"{prefix}recall@100"] = recall_at_k(ranking, qrels, 100)
            metrics[f"{prefix}mrr@10"] = mrr_at_k(ranking, qrels, 10)
        ok = metrics["mrr@10"] > 0
        return Outcome(
            status=Status.PASS if ok else Status.FAIL,
            score=metrics["ndcg@10"],
            metrics=metrics,
            details={
                "top10": rankings["hybrid"][:10],
                "relevant": sorted(d for d, r in qrels.items() if r > 0),
            },
        )

    # ------------------------------------------------------------------------------ run, report

    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        out = tag_metrics(attempts)
        if self._collections and all(c.index is not None for c in self._collections.values()):
            failed = sum(len(c.failed) for c in self._collections.values())
            tried = sum(
                len(c.index) + len(c.failed) for c in self._collections.values() if c.index is not None
            )
            # a count of the documents tried: one more failing document is a regression
            out["docs_failed_to_index"] = MetricValue(
                value=float(failed), n=tried, kind="count", direction="lower", unit="documents"
            )
            degraded = sum(len(c.degraded) for c in self._collections.values())
            out["docs_degraded"] = MetricValue(
                value=float(degraded), n=tried, kind="count", direction="lower", gated=False, unit="documents"
            )
            for c in self._collections.values():
                assert c.index is not None
                out[f"index/{c.name}/chunks"] = MetricValue(
                    value=float(c.index.n_chunks), n=1, kind="count", gated=False
                )
                out[f"index/{c.name}/seconds"] = MetricValue(
                    value=c.index_s, n=1, kind="continuous", gated=False, direction="lower", unit="s"
                )
        hard = [a for a in attempts if a.case_id.startswith("hard/")]
        if hard:
            # cases passing per iteration, a count: a hard case that passed and now fails *or is skipped*
            # lowers it; one skipped (with its reason) in both runs leaves it the same
            passed = sum(1 for a in hard if a.status == Status.PASS)
            iterations = len({a.iteration for a in hard})
            measured = len({a.case_id for a in hard if a.status in MEASURED_STATUSES})
            out["hard_cases_passed"] = MetricValue(
                value=passed / iterations, n=measured, kind="count", unit="cases"
            )
        answered = [a for a in attempts if "verdict" in a.details]
        if answered:
            unscored = sum(1 for a in answered if a.details["verdict"] == "unscored")
            out["answers_unscored"] = MetricValue(
                value=float(unscored), n=len(answered), kind="count", direction="lower", gated=False
            )
        return out

    def report_section(self, scorecard: Scorecard) -> str:
        failed = {d: m for c in self._collections.values() for d, m in c.failed.items()}
        degraded = {d: m for c in self._collections.values() for d, m in c.degraded.items()}
        return render_section(scorecard, self._notes, failed, degraded)

    def failure_reason(self, attempt: Attempt) -> str:
        return failure_reason(attempt) or super().failure_reason(attempt)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        return [p for p in (recall_curve_plot(attempts), tag_recall_plot(attempts)) if p is not None]
