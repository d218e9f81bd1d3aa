"""``assay hillclimb --benchmark tasks``: the coding tasks of a toybox suite of ``assay eval tasks``.

Each coding task of the suite is a case (a question task is graded only by the tasks judge step, which a
measurement does not run, so it is left out: it could never change). The suite kinds of ``eval tasks`` that are
not toybox tasks (``realfix``, ``swebench``) are refused by name: their cases are other projects' fixes, not the
toybox's, and their grades come from a separate step.

What an edit may never contain is every task's ground truth (:meth:`TasksTarget.forbidden`); what the fixer
sees of a failing attempt is the request, the agent's commands and answer, and which checks failed: never the
evidence of a check that holds an expected value (:data:`VALUE_CHECKS`), nor the run's reason, nor a grade.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.exec import validate_options
from assay.hillclimb._noise_pick import NoiseFit
from assay.hillclimb._target_base import Forbidden
from assay.runs import Attempt

__all__ = ["TOYBOX_SUITES", "VALUE_CHECKS", "TasksTarget"]

TOYBOX_SUITES = ("core", "adversarial", "everyday", "full")
#: checks whose evidence quotes what was expected (pytest's assertions and required test ids, a probe's
#: output, the files that had to stay unchanged): the fixer is told only that they failed
VALUE_CHECKS = ("tests_pass", "probe", "unchanged")
#: options of ``eval agent`` that ``eval tasks`` has none of: refused, never ignored
_AGENT_ONLY = {
    "scenarios_dir": "--scenarios",
    "simulator_model": "--simulator-model",
    "max_user_messages": "--max-user-messages",
    "judge_schema": "--judge-schema",
    "allow_self_judge": "--allow-self-judge",
}
#: characters of the agent's answer and diff the fixer is shown
_SHOWN = 2000


def _node_paths(node_ids: list[str]) -> list[str]:
    """Test node ids and the files they name (``tests/test_x.py::test_y`` -> both)."""
    return [p for n in node_ids for p in dict.fromkeys((n, n.partition("::")[0]))]


class TasksTarget:
    """``assay eval tasks`` on a toybox suite; the reference agent's profile is what gets edited."""

    benchmark = "tasks"
    #: ``eval tasks`` runs one task at a time unless told otherwise (each spawns pytest in its own copy)
    max_concurrency = 1

    def __init__(self, options: dict[str, Any]) -> None:
        from assay.evals.tasks import SUITE_KINDS, TasksOptions, default_tasks_dir, load_tasks

        self.options = {k: v for k, v in options.items() if v is not None}
        self.suite = str(self.options.pop("suite", None) or "core")
        if self.suite in SUITE_KINDS:
            raise ConfigError(
                f"--suite {self.suite}: hillclimb climbs the toybox suites of eval tasks "
                f"({', '.join(TOYBOX_SUITES)}); {' and '.join(SUITE_KINDS)} are not for hillclimb"
            )
        if self.suite not in TOYBOX_SUITES:
            raise ConfigError(
                f"--suite {self.suite!r}: hillclimb --benchmark tasks has suites {', '.join(TOYBOX_SUITES)}"
            )
        given = [flag for k, flag in _AGENT_ONLY.items() if k in self.options]
        if given:
            raise ConfigError(f"{', '.join(given)}: options of --benchmark agent, not tasks")
        #: the --category the coding tasks were chosen by (hillclimb's own: the eval runs the chosen tasks)
        self.category: str | None = self.options.pop("category", None)
        given_options = validate_options(TasksOptions, self.options)
        if given_options.harness not in (None, "reference"):
            raise ConfigError("hillclimb edits the reference agent's profile: --harness must be reference")
        path = Path(given_options.tasks_file or default_tasks_dir() / "tasks.json")
        self.options["tasks_file"] = str(path)
        self.tasks_dir = path.parent
        self.file = load_tasks(path)
        wanted = {c.strip() for c in str(self.category or "").split(",") if c.strip()}
        chosen = [t for t in self.file.suite(self.suite) if t.kind == "coding"]
        if wanted:
            unknown = sorted(wanted - {t.category for t in chosen})
            if unknown:
                raise ConfigError(
                    f"--category {','.join(unknown)}: no coding task of suite {self.suite} has it "
                    f"({', '.join(sorted({t.category for t in chosen}))})"
                )
            chosen = [t for t in chosen if t.category in wanted]
        self.chosen = {t.id: t for t in chosen}
        self._fit: NoiseFit | None = None
        if (
            self.chosen
        ):  # the eval's own option checks (model required, caps, profile), before any branch or run
            from assay.evals.tasks import TasksBenchmark

            bench = TasksBenchmark(self.run_options(list(self.chosen), None))
            version = bench.load_suite(self.suite).version
            self._fit = NoiseFit(self.benchmark, self.suite, version, bench.subject_config())

    def noise_fit(self) -> NoiseFit:
        if self._fit is None:
            raise ConfigError(f"no coding task selected in suite {self.suite}: nothing to measure")
        return self._fit

    def cases(self) -> dict[str, str]:
        return {tid: t.category for tid, t in self.chosen.items()}

    def run_options(self, case_ids: list[str], profile: Path | None) -> dict[str, Any]:
        out = {k: v for k, v in self.options.items() if k != "category"}
        out["tasks"] = ",".join(case_ids)
        if profile is not None:
            out["profile"] = str(profile)
        return out

    def forbidden(self) -> Forbidden:
        """Every task of the file: its id, a question's points, reference and wrong answers, and the paths its
        checks and setups name (required and selected tests, probes, protected files, every file the setups
        plant, as planted and where they land in the copy, and the big log)."""
        from assay.evals.tasks import BIG_LOG, PLANTED_DIR, PROBES_DIR

        f = Forbidden(case_ids=[t.id for t in self.file.tasks])
        planted = self.tasks_dir / PLANTED_DIR
        for file in sorted(planted.rglob("*")) if planted.is_dir() else []:
            if file.is_file():
                rel = file.relative_to(planted).as_posix()
                f.paths += [rel, file.name, f"tests/{file.name}", f"{PLANTED_DIR}/{rel}"]
        if any(s.kind == "big_log" for t in self.file.tasks for s in t.setup):
            f.paths.append(BIG_LOG)
        for t in self.file.tasks:
            f.phrases += [*t.must_establish, *t.wrong_answers]
            if t.reference_answer:
                f.phrases.append(t.reference_answer)
            e = t.expect
            if e is None:
                continue
            if e.probe:
                f.paths += [e.probe, f"{PROBES_DIR}/{e.probe}"]
            f.paths += [*e.unchanged, *e.keep_uncommitted]
            if e.tests_pass is not None:
                tp = e.tests_pass
                f.paths += _node_paths([*tp.require, *tp.select, *tp.deselect]) + list(tp.cold)
        return f

    def failure_view(self, attempt: Attempt) -> dict[str, Any]:
        from assay.hillclimb._rollup import failing_dimensions

        d = attempt.details
        view: dict[str, Any] = {
            "category": attempt.category,
            "status": attempt.status.value,
            "request": d.get("request"),
            "failing_dimensions": failing_dimensions(attempt),
        }
        if attempt.error is not None:
            view["error"] = f"{attempt.error.type}: {attempt.error.message[:300]}"
        view["commands"] = list(d.get("commands") or [])
        view["answer"] = str(d.get("answer") or "")[:_SHOWN]
        view["cut_off"] = d.get("cut_off")
        if d.get("diff"):
            view["diff"] = str(d["diff"])[:_SHOWN]
        view["failed_checks"] = [
            {
                "check": c.get("name"),
                "detail": "(the expected value is withheld)"
                if c.get("name") in VALUE_CHECKS
                else str(c.get("evidence") or "")[:300],
            }
            for c in d.get("checks") or []
            if c.get("passed") is False
        ]
        return view
