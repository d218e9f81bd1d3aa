"""The ``agent`` benchmark class: suites, roles, lifecycle, one scenario per case and its results."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assay.errors import ConfigError
from assay.evals._harnessed import LOCAL_CTX_SIZE, model_options
from assay.evals._held import fence_choice, fence_config, held_limits
from assay.evals._suite_id import suite_version
from assay.evals.agent._attempt import AttemptPlan, run_scenario
from assay.evals.agent._ci import CI_JOBS
from assay.evals.agent._defaults import (
    AGENT_LIMITS,
    DEFAULT_HARNESS,
    FULL_EMBEDDER,
    FULL_MODEL,
    MAX_TOKENS,
    PR_EMBEDDER,
    PR_HARNESSES,
    PR_MODEL,
)
from assay.evals.agent._health_moves import TierMoves
from assay.evals.agent._options import AgentOptions
from assay.evals.agent._report import agent_summary, failure_reason, render_section, score_plot
from assay.evals.agent._scenario import Scenario
from assay.evals.agent.select import Selection, named_drafts, select
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite, validate_options
from assay.runs import Attempt, MetricSpec, Scorecard, SubjectConfig

if TYPE_CHECKING:
    from assay.models import ChatModel
    from assay.report import Plot


def _agent_options(max_tokens: int) -> dict[str, Any]:
    return {"max_tokens": max_tokens}


def _scenarios_dir(options: AgentOptions) -> Path:
    from assay.evals.agent.scenario_load import default_scenarios_dir

    return Path(options.scenarios_dir or default_scenarios_dir())


def describe_scenarios(directory: Path) -> str:
    """What ``--list`` prints: every scenario's id, category, tier, severity and source."""
    from assay.evals.agent.scenario_load import load_scenarios
    from assay.evals.agent.tiers import load_tiers, tiers_path

    scenarios = load_scenarios(directory)
    tiers = load_tiers(tiers_path(directory)) if tiers_path(directory).is_file() else None
    lines = [f"{'id':<40} {'category':<20} {'tier':<9} {'severity':<9} source"]
    for s in scenarios:
        tier = (tiers.tier_of(s.id) if tiers else None) or "-"
        source = "-" if s.source is None else s.source.kind + (f" {s.source.link}" if s.source.link else "")
        script = "" if s.script is not None else "  [no script: full only]"
        lines.append(f"{s.id:<40} {s.category:<20} {tier:<9} {s.severity:<9} {source}{script}")
    return "\n".join(lines)


def _script_model(replies: list[dict[str, Any]], default: dict[str, Any] | None = None) -> ChatModel:
    from assay.models.scripted import ScriptedModel

    script: dict[str, Any] = {"replies": replies}
    if default is not None:
        script["default"] = default
    model = ScriptedModel(script)
    # reported as the model that ran (AgentResult.model_ran), so --agent-model can be checked in pr too
    model.model, model.name = PR_MODEL.partition(":")[2], f"scripted/{PR_MODEL.partition(':')[2]}"
    return model


def same_model(a: str, b: str) -> bool:
    """Whether two model specs name one model: equal, or the same name after the provider and before ``@``
    (``local/smollm2`` and ``openai-compat/smollm2@http://...`` are one model)."""

    def name(spec: str) -> str:
        return (spec.partition("/")[2].partition("@")[0] or spec).casefold()

    return a == b or name(a) == name(b)


def self_judged_roles(agent: str, simulator: str, judge: str) -> list[str]:
    """The roles of ``simulator`` and ``judge`` that run the agent's own model."""
    return [role for role, spec in (("judge", judge), ("simulator", simulator)) if same_model(spec, agent)]


class AgentBenchmark(Benchmark):
    """Multi-turn scenarios: a simulated user, the agent under test, checks in code and a separate judge."""

    short_help = "Multi-turn scenarios: simulated user, checks in code, a separate judge."
    subcommands: ClassVar[dict[str, str]] = {
        "controls": "assay.evals.agent._controls_command:agent_controls_command",
        "draft": "assay.evals.agent._draft_command:draft_command",
        "promote": "assay.evals.agent._draft_command:promote_command",
    }
    case_view = "assay.view._case:agent_view"
    ci_jobs = CI_JOBS

    name = "agent"
    help = (
        "Multi-turn scenarios: a simulated user talks to the agent; checks in code, then a separate judge. "
        "pr plays every role from the scenario scripts (offline); full runs real models."
    )
    suites = ("pr", "full")
    default_suite = "pr"
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = (
        MetricSpec(name="judged_score", kind="continuous", direction="higher", tolerance=0.1, gated=True),
        MetricSpec(
            name="code_checks_passed", kind="proportion", direction="higher", tolerance=0.0, gated=True
        ),
        MetricSpec(name="turns", kind="continuous", direction="lower", tolerance=0.25, gated=False),
        MetricSpec(name="tokens_agent", kind="continuous", direction="lower", tolerance=0.25, gated=False),
        MetricSpec(name="tokens_judge", kind="continuous", direction="lower", tolerance=0.25, gated=False),
        MetricSpec(
            name="tokens_simulator", kind="continuous", direction="lower", tolerance=0.25, gated=False
        ),
    )

    Options = AgentOptions
    options: AgentOptions

    def __init__(self, options: AgentOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self._suite = ""
        self._scenarios: dict[str, Scenario] = {}
        self._selection = Selection()
        self._embedder: Any = None
        self._simulator: ChatModel | None = None
        self._judge: ChatModel | None = None
        self._gateway: Any = None
        self._results_dir = Path("results")

    @classmethod
    def move_advisor(cls) -> TierMoves:
        return TierMoves()

    @classmethod
    def describe(cls, options: AgentOptions | Mapping[str, Any]) -> str:
        return describe_scenarios(_scenarios_dir(validate_options(AgentOptions, options)))

    # ------------------------------------------------------------------ suite
    @property
    def harness_name(self) -> str:
        return str(self.options.harness or DEFAULT_HARNESS)

    def _check_options(self, suite: str) -> None:
        if suite not in self.suites:
            raise ConfigError(f"--suite {suite!r}: agent has suites {', '.join(self.suites)}")
        if suite == "pr":
            given = [
                f"--{k.replace('_', '-')}"
                for k in ("model", "simulator_model", "judge_model")
                if getattr(self.options, k)
            ]
            if given:
                raise ConfigError(
                    f"{', '.join(given)} apply to --suite full (pr plays every role from the scenario scripts)"
                )
            if self.harness_name not in PR_HARNESSES:
                raise ConfigError(
                    f"--harness {self.harness_name}: pr runs the scripted agent through "
                    f"{', '.join(PR_HARNESSES)} (the scripted external agent for the last two); use --suite full"
                )
            if self.options.allow_self_judge:
                raise ConfigError("--allow-self-judge applies to --suite full (pr's roles are scripted)")
        self._profile()  # refused with another harness or when not a folder
        tokens = self.options.agent_max_tokens
        if self.harness_name != DEFAULT_HARNESS and tokens != MAX_TOKENS["agent"]:
            # only the reference agent's model calls take a cap from here: refused, never ignored
            raise ConfigError(
                f"--agent-max-tokens applies to the reference agent, not to --harness {self.harness_name}"
            )
        if suite == "full":
            agent = str(self.options.model or FULL_MODEL)
            roles = self_judged_roles(agent, *self._full_roles(agent))
            if roles and not self.options.allow_self_judge:
                flags = " and ".join(f"--{r}-model" for r in roles)
                raise ConfigError(
                    f"--suite full: the {' and the '.join(roles)} would run the agent's own model {agent} "
                    f"(the agent would grade itself); pass {flags} naming another model, or --allow-self-judge"
                )

    def load_suite(self, suite: str) -> Suite:
        from assay.evals.agent.scenario_load import load_scenarios

        self._check_options(suite)
        self._suite = suite
        directory = _scenarios_dir(self.options)
        scenarios = load_scenarios(directory)
        scenarios += named_drafts(directory, self.options.scenario, {s.id for s in scenarios})
        self._scenarios = {s.id: s for s in scenarios}
        chosen, self._selection = select(
            scenarios,
            category=self.options.category,
            scenario=self.options.scenario,
            tier=self.options.tier,
            scenarios_dir=directory,
        )
        cases = {
            s.id: Case(id=s.id, category=s.category, input={"scenario": s.id}, tags=[*s.tags, s.severity])
            for s in scenarios
        }
        # the version is of every scenario in the folder, so a targeted run compares with a full baseline
        version = suite_version(
            suite, list(cases.values()), extra={"scenarios": {s.id: s.digest for s in scenarios}}
        )
        return Suite(name=suite, version=version, cases=[cases[s.id] for s in chosen])

    def _full_roles(self, agent: str) -> tuple[str, str]:
        """The simulator's and the judge's model in full: as given, else the agent's own (refused unless
        --allow-self-judge)."""
        return str(self.options.simulator_model or agent), str(self.options.judge_model or agent)

    def _role_specs(self) -> tuple[str, str, str]:
        if self._suite == "pr":
            return PR_MODEL, PR_MODEL, PR_MODEL
        agent = str(self.options.model or FULL_MODEL)
        return (agent, *self._full_roles(agent))

    def _judge_constrained(self) -> bool:
        # the embedded model writes the answer's JSON shape only when its decoding is held to the schema
        if self._suite != "full":
            return False
        from assay.judge import holds_to_schema

        return holds_to_schema(self._role_specs()[2], self.options.judge_schema)

    def _agent_limits(self) -> dict[str, Any]:
        """The caps of each agent run as applied (and recorded): --max-steps over the default."""
        return {**AGENT_LIMITS, "max_steps": self._caps()[0]}

    def _caps(self) -> tuple[int, int, int]:
        """Agent steps per user message, user messages per objective, tokens per agent call."""
        o = self.options
        return o.max_steps, o.max_user_messages, o.agent_max_tokens

    def _profile(self) -> str | None:
        """The reference agent's profile folder, as given (None: the built-in one)."""
        from assay.agents import profile_option

        return profile_option(self.options.profile, self.harness_name)

    def secret_values(self) -> list[str]:
        # the fake keys and passwords the security scenarios plant: never written to an artifact
        return sorted({v for s in self._scenarios.values() for v in s.setup.secrets})

    def subject_config(self) -> SubjectConfig:
        agent, simulator, judge = self._role_specs()
        embedder = PR_EMBEDDER if self._suite == "pr" else FULL_EMBEDDER
        own = self_judged_roles(agent, simulator, judge) if self._suite == "full" else []
        return SubjectConfig(
            subject=self.harness_name,
            model=self.options.agent_model or agent,
            judge_model=judge,
            embedder=embedder,
            extra={
                "simulator_model": simulator,
                "harness": self.harness_name,
                "embedder": embedder,
                **fence_config(self.options),
                "judge_constrained": self._judge_constrained(),
                "max_tokens": {**MAX_TOKENS, "agent": self._caps()[2]},
                "max_steps": self._caps()[0],
                "max_user_messages": self._caps()[1],
                "agent_limits": self._agent_limits(),
                "local_ctx_size": LOCAL_CTX_SIZE if self._suite == "full" else None,
                "profile": self._profile(),
                # the roles that ran the agent's own model (full, --allow-self-judge): the report says so
                **({"self_judged": own} if own else {}),
            },
        )

    # ------------------------------------------------------------------ lifecycle
    async def preflight(self) -> None:
        """Build the embedder and, in full, the simulator and judge models; check each backend answers."""
        from assay.embed import get_embedder

        self._embedder = get_embedder(PR_EMBEDDER if self._suite == "pr" else FULL_EMBEDDER)
        if self._suite != "full":
            return
        from assay.models import get_model

        _, simulator, judge = self._role_specs()
        built: dict[str, ChatModel] = {}
        for spec in dict.fromkeys((simulator, judge)):
            built[spec] = get_model(spec, **model_options(spec))
            check = getattr(built[spec], "preflight", None)
            if check is not None:
                await check()
        self._simulator, self._judge = built[simulator], built[judge]

    async def setup(self, run_dir: str) -> None:
        self._results_dir = Path(run_dir).parent  # where `assay eval agent controls` records calibrations
        if self._embedder is None:  # a caller that skipped preflight
            await self.preflight()
        if self._suite == "full":
            from assay.agents import Gateway, get_harness

            if self.harness_name != DEFAULT_HARNESS:  # an unknown harness is refused before any scenario
                await get_harness(self.harness_name).close()
            # the gateway serves from a thread with its own event loop, so it holds its own model instance
            agent = self._role_specs()[0]
            self._gateway = Gateway(agent, model_options=model_options(agent))
            await asyncio.to_thread(self._gateway.start)

    async def teardown(self) -> None:
        if self._gateway is not None:
            await asyncio.to_thread(self._gateway.stop)
            self._gateway = None

    # ------------------------------------------------------------------ one scenario
    def simulator_model_for(self, scenario: Scenario) -> ChatModel:
        """The simulator's model for one attempt (pr: the scenario's ``script.simulator``, else "next")."""
        if self._suite == "full":
            assert self._simulator is not None
            return self._simulator
        from assay.evals.agent._simulator import NEXT

        assert scenario.script is not None
        replies = [{"text": t} for turn in scenario.script.simulator or [] for t in turn]
        return _script_model(replies, default={"text": NEXT})

    def judge_model_for(self, scenario: Scenario) -> ChatModel:
        """The judge's model for one attempt (pr: the scenario's ``script.judge``, a mapping sent as JSON)."""
        if self._suite == "full":
            assert self._judge is not None
            return self._judge
        import json

        assert scenario.script is not None
        replies = [{"text": a if isinstance(a, str) else json.dumps(a)} for a in scenario.script.judge]
        if not replies:
            raise ConfigError(
                "script.judge is empty: pr needs the judge's scripted answer", path=scenario.path
            )
        return _script_model(replies)

    def _plan(self, scenario: Scenario, ctx: AttemptContext) -> AttemptPlan:
        from assay.evals.agent.scenario_load import DOCUMENTS_DIR

        agent, simulator, judge = self._role_specs()
        embedder = self._embedder
        route = None
        if self._suite == "pr" and self.harness_name != DEFAULT_HARNESS:
            from assay.evals.agent._external import scripted_external_harness

            assert scenario.script is not None
            replies = [r for turn in scenario.script.agent for r in turn]
            name = self.harness_name

            def make(prepared: Any) -> Any:
                return scripted_external_harness(name, replies, prepared.workdir.parent / "scripted-agent")

        elif self._suite == "pr":
            from assay.agents import ReferenceHarness

            assert scenario.script is not None
            agent_model = _script_model([r for turn in scenario.script.agent for r in turn])

            def make(prepared: Any) -> Any:
                return ReferenceHarness(
                    model=agent_model,
                    profile=self._profile(),
                    generate_options=_agent_options(self._caps()[2]),
                    **prepared.reference_options(),
                )

        else:
            from assay.agents import get_harness

            route = self._gateway.route(run=f"{_safe(scenario.id)}-i{ctx.iteration}")
            name = self.harness_name

            def make(prepared: Any) -> Any:
                if name == DEFAULT_HARNESS:
                    return get_harness(
                        name,
                        profile=self._profile(),
                        generate_options=_agent_options(self._caps()[2]),
                        **prepared.reference_options(),
                    )
                return get_harness(name)

        return AttemptPlan(
            scenario=scenario,
            documents_dir=_scenarios_dir(self.options) / DOCUMENTS_DIR,
            embedder=embedder,
            make_harness=make,
            simulator_model=self.simulator_model_for(scenario),
            judge_model=self.judge_model_for(scenario),
            route=route,
            fence=fence_choice(self.options).on,
            agent_model=self.options.agent_model,
            copy_documents=self._suite == "full" and self.harness_name != DEFAULT_HARNESS,
            world_embedder=PR_EMBEDDER if self._suite == "pr" else FULL_EMBEDDER,
            judge_constrained=self._judge_constrained(),
            limits=held_limits(self.options, **self._agent_limits()),
            max_user_messages=self._caps()[1],
            simulator_options={"max_tokens": MAX_TOKENS["simulator"]},
            judge_options={"temperature": 0, "max_tokens": MAX_TOKENS["judge"]},
            agent_label=agent,
            simulator_label=simulator,
            judge_label=judge,
        )

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        scenario = self._scenarios[case.input["scenario"]]
        if self._suite == "pr" and scenario.script is None:
            return Outcome.skipped(
                "no script: pr plays every role from the scenario's script; run it with --suite full",
                scenario=scenario.id,
            )
        try:
            return await run_scenario(self._plan(scenario, ctx), ctx)
        except ConfigError as exc:
            if self._suite != "pr" or exc.path not in (None, "<script>"):
                raise
            # a scripted role ran out of replies (a judge retried past its script): the scenario's script is short
            text = str(exc).removeprefix("<script>: ")
            raise ConfigError(f"scenario {scenario.id}: its script: {text}", path=scenario.path) from exc

    # ------------------------------------------------------------------ results
    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        from assay.evals.agent._report import count_sources

        extra: dict[str, Any] = {
            "agent": agent_summary(
                attempts,
                self._scenarios,
                dict(zip(("agent", "simulator", "judge"), self._role_specs(), strict=True)),
            ),
            "sources": count_sources([s for s in self._scenarios.values() if not s.draft]),
        }
        if self._selection.targeted:
            extra["selection"] = self._selection.as_extra()
        extra["judge_calibration"] = self._judge_calibration()
        return extra

    def _judge_calibration(self) -> dict[str, Any]:
        """Whether the judge passed ``assay eval agent controls`` on this rubric, judge prompt and control set
        (its newest record in the results folder this run is in, read by the controls lane's rule); a scripted
        judge is not calibrated, it is the script."""
        from assay.evals.agent._controls_lane import controls_due
        from assay.evals.agent._controls_load import default_controls_dir, load_controls
        from assay.evals.agent._rubric import RUBRIC_VERSION

        judge = self._role_specs()[2]
        out: dict[str, Any] = {"judge_model": judge, "rubric_version": RUBRIC_VERSION}
        if self._suite == "pr":
            return {**out, "status": "scripted"}
        try:
            check = controls_due(self._results_dir, judge, load_controls(default_controls_dir()))
        except ConfigError as exc:  # no control set to judge calibration by: say so, measure anyway
            return {**out, "status": "uncalibrated", "why": f"the controls cannot be read: {exc}"}
        if check.due or check.record is None:
            return {**out, "status": "uncalibrated", "why": "; ".join(check.reasons)}
        record = check.record
        return {
            **out,
            "status": "passed" if record.passed else "failed",
            # over the controls the judge decides (those a failed code check decides are apart)
            "agreement": record.agreement,
            "kappa": record.kappa_vs_labels,
            "judge_decided": record.judge_decided_pass + record.judge_decided_fail,
            "self_consistency": record.self_consistency,
            "below": list(record.below),
        }

    def failure_reason(self, attempt: Attempt) -> str:
        return failure_reason(attempt) or super().failure_reason(attempt)

    def report_section(self, scorecard: Scorecard) -> str:
        return render_section(scorecard)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        plot = score_plot(scorecard)
        return [plot] if plot is not None else []


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:60]
