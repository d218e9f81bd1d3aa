"""``assay hillclimb --benchmark agent``: the scenarios of ``assay eval agent``, the reference agent's profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.exec import RunOptions, validate_options
from assay.hillclimb._noise_pick import NoiseFit
from assay.hillclimb._target_base import Forbidden
from assay.runs import Attempt

__all__ = ["AgentTarget"]

#: check names whose detail would show a ground-truth value: the fixer is told only that they failed
_VALUE_CHECKS = ("fact", "number")
#: options of ``eval tasks`` that ``eval agent`` has none of: refused, never ignored
_TASKS_ONLY = ("tasks_file", "work_root", "run_timeout")


class AgentTarget:
    """``assay eval agent``: each scenario is a case; the reference agent's profile is what gets edited."""

    benchmark = "agent"
    max_concurrency = RunOptions.max_concurrency

    def __init__(self, options: dict[str, Any]) -> None:
        from assay.evals.agent import AgentOptions
        from assay.evals.agent.scenario_load import default_scenarios_dir, load_scenarios
        from assay.evals.agent.select import select

        self.options = {k: v for k, v in options.items() if v is not None}
        given = [f"--{k.replace('_', '-')}" for k in _TASKS_ONLY if k in self.options]
        if given:
            raise ConfigError(f"{', '.join(given)}: options of --benchmark tasks, not agent")
        self.suite = str(self.options.pop("suite", None) or "full")
        if self.suite not in ("pr", "full"):
            raise ConfigError(f"--suite {self.suite!r}: agent has suites pr, full")
        given_options = validate_options(AgentOptions, self.options)
        if given_options.harness not in (None, "reference"):
            raise ConfigError("hillclimb edits the reference agent's profile: --harness must be reference")
        directory = Path(given_options.scenarios_dir or default_scenarios_dir())
        self.options["scenarios_dir"] = str(directory)
        self.all = load_scenarios(directory)
        #: the --category the scenarios were chosen by (None: every category)
        self.category = given_options.category
        chosen, _ = select(self.all, category=self.category, scenarios_dir=directory)
        if self.suite == "pr":  # pr skips a scenario without a script: it could never change
            chosen = [s for s in chosen if s.script is not None]
        self.chosen = {s.id: s for s in chosen}
        self._fit: NoiseFit | None = None
        if (
            self.chosen
        ):  # the eval's own option checks (models on pr, caps, harness), before any branch or run
            from assay.evals.agent import AgentBenchmark

            bench = AgentBenchmark({**self.options, "scenario": ",".join(self.chosen)})
            version = bench.load_suite(self.suite).version
            self._fit = NoiseFit(self.benchmark, self.suite, version, bench.subject_config())

    def noise_fit(self) -> NoiseFit:
        if self._fit is None:
            raise ConfigError("no scenario selected: nothing to measure")
        return self._fit

    def cases(self) -> dict[str, str]:
        return {sid: s.category for sid, s in self.chosen.items()}

    def run_options(self, case_ids: list[str], profile: Path) -> dict[str, Any]:
        out = {k: v for k, v in self.options.items() if k != "category"}
        return {**out, "scenario": ",".join(case_ids), "profile": str(profile)}

    def forbidden(self) -> Forbidden:
        f = Forbidden(case_ids=[s.id for s in self.all])
        for s in self.all:
            f.paths += list(s.setup.files) + [d.name for d in s.setup.documents]
            f.planted += s.setup.canaries + s.setup.secrets
            for t in s.turns:
                if t.ground_truth is not None:
                    f.phrases += t.ground_truth.facts
                    if t.ground_truth.expected_answer:
                        f.phrases.append(t.ground_truth.expected_answer)
                    f.numbers += t.ground_truth.numbers
        return f

    def failure_view(self, attempt: Attempt) -> dict[str, Any]:
        from assay.hillclimb._rollup import failing_dimensions

        d = attempt.details
        view: dict[str, Any] = {
            "category": attempt.category,
            "status": attempt.status.value,
            "ended_by": d.get("ended_by"),
            "failing_dimensions": failing_dimensions(attempt),
        }
        if attempt.error is not None and not d.get("turns"):
            view["error"] = f"{attempt.error.type}: {attempt.error.message[:300]}"
        turns = []
        for t in d.get("turns") or []:
            messages = []
            for m in t.get("messages") or []:
                calls = [
                    {
                        "tool": c.get("name"),
                        "arguments": c.get("arguments"),
                        "status": c.get("status"),
                        "result": (c.get("result_summary") or "")[:300],
                    }
                    for c in m.get("tool_calls") or []
                ]
                messages.append({"role": m.get("role"), "text": m.get("text", ""), "tool_calls": calls})
            turns.append(
                {
                    "turn": t.get("index"),
                    "messages": messages,
                    "cut_off": t.get("cut_off"),
                    "agent_error": t.get("agent_error"),
                }
            )
        view["transcript"] = turns
        checks = []
        for c in d.get("checks") or []:
            if c.get("passed"):
                continue
            hidden = c.get("name") in _VALUE_CHECKS
            checks.append(
                {
                    "check": c.get("name"),
                    "turn": c.get("turn"),
                    "detail": "(the expected value is withheld)" if hidden else c.get("detail", ""),
                }
            )
        view["failed_checks"] = checks
        return view
