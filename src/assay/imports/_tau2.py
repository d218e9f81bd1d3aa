"""tau2-bench results (``tau2 run`` ... ``--save-to``: ``Results`` with ``simulations``, or its dir format:
``results.json`` beside ``simulations/``) and tau-bench results (the list of ``EnvRunResult`` its ``run()``
writes): each simulation an attempt of its task, its trial the repeat, so trials fold into stability and pass^k.

A simulation passes as the tools say (reward 1, within 1e-6) or, with ``--pass-threshold``, at a reward at or
above it. An infrastructure error (tau2's ``infrastructure_error``, which tau2 leaves out of its metrics; a
tau-bench task that raised a provider's connection, rate-limit or auth error) is INFRA_ERROR, never a FAIL.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.imports._model import ForeignFileError, Imported
from assay.runs import Attempt, ErrorInfo, MetricSpec, Status, Usage

EXPECTED = (
    "a tau2-bench results file (Results: info and simulations with task_id, trial and reward_info) or a "
    "tau-bench results file (a list of task_id, reward, info, traj, trial)"
)
#: tau2's and tau-bench's success: a reward of 1 within this
_EPS = 1e-6
#: tau-bench's file name: {agent_strategy}-{model}-{temperature}_range_{start}-{end}_user-{user model}-{strategy}_{time}
_TAU1_NAME = re.compile(
    r"^(?P<agent>tool-calling|act|react|few-shot|orchestrated-tool-calling)-(?P<model>.+)-(?P<temp>[\d.]+)"
    r"_range_-?\d+--?\d+_user-(?P<user>.+)-(?P<strategy>[a-z]+)_[\w]+\.json$"
)
#: the exceptions (litellm's names) of a provider that could not answer: the run's infrastructure, not the agent
_INFRA = re.compile(
    r"\b(APIConnectionError|RateLimitError|AuthenticationError|ServiceUnavailableError|InternalServerError|"
    r"Timeout|APITimeoutError|PermissionDeniedError)\b"
)


def _when(text: Any, default: datetime) -> datetime:
    try:
        stamp = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return default
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _passes(reward: float, threshold: float | None) -> bool:
    return reward >= threshold - 1e-9 if threshold is not None else abs(reward - 1.0) <= _EPS


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ForeignFileError(path, f"{EXPECTED}: {type(exc).__name__}") from None


def _dir_simulations(path: Path, data: dict[str, Any]) -> list[Any]:
    """tau2's dir format: ``results.json`` holds the index, ``simulations/<id>.json`` one simulation each."""
    sims_dir = path.parent / "simulations"
    ids = [e.get("id") for e in data["simulation_index"] if isinstance(e, dict)]
    sims = []
    for sid in ids:
        sim_path = sims_dir / f"{sid}.json"
        if not sim_path.is_file():
            raise ForeignFileError(path, f"{EXPECTED}: its index names {sim_path}, which is missing")
        sims.append(_load(sim_path))
    return sims


def read_tau2(paths: list[Path], pass_threshold: float | None = None) -> Imported:
    if len(paths) != 1:
        raise ForeignFileError(" ".join(map(str, paths)), "one tau2-bench or tau-bench results file")
    path = paths[0]
    data = _load(path)
    if isinstance(data, list):
        return _read_tau1(path, data, pass_threshold)
    if not isinstance(data, dict) or not isinstance(data.get("info"), dict):
        raise ForeignFileError(path, f"{EXPECTED}: it has no info")
    sims = data.get("simulations")
    if not sims and isinstance(data.get("simulation_index"), list):
        sims = _dir_simulations(path, data)
    if not isinstance(sims, list) or not sims:
        raise ForeignFileError(path, f"{EXPECTED}: it has no simulations")
    return _read_tau2(path, data, sims, pass_threshold)


def _read_tau2(path: Path, data: dict[str, Any], sims: list[Any], threshold: float | None) -> Imported:
    info = data["info"]
    agent, user = info.get("agent_info") or {}, info.get("user_info") or {}
    domain = str((info.get("environment_info") or {}).get("domain_name") or "tau2")
    started = _when(data.get("timestamp"), datetime.fromtimestamp(path.stat().st_mtime, UTC))
    attempts: list[Attempt] = []
    kinds: dict[str, set[bool]] = {}
    basis: set[str] = set()
    for n, sim in enumerate(sims):
        try:
            case_id, trial = str(sim["task_id"]), int(sim.get("trial") or 0)
            why = str(sim["termination_reason"])
        except (KeyError, TypeError, ValueError):
            raise ForeignFileError(
                path, f"{EXPECTED}: simulation {n} has no task_id, trial or termination_reason"
            ) from None
        reward_info = sim.get("reward_info")
        reward = _number(reward_info.get("reward")) if isinstance(reward_info, dict) else None
        cost = [c for c in (_number(sim.get("agent_cost")), _number(sim.get("user_cost"))) if c is not None]
        base: dict[str, Any] = {
            "case_id": case_id,
            "iteration": trial,
            "category": domain,
            "started_at": _when(sim.get("start_time"), started),
            "elapsed_s": _number(sim.get("duration")) or 0.0,
            "usage": Usage(cost_usd=sum(cost), cost_source="harness_counts") if cost else None,
            "details": {"simulation_id": sim.get("id"), "termination_reason": why, "seed": sim.get("seed")},
        }
        if why == "infrastructure_error":  # tau2 leaves these out of its metrics: never ran, not measured
            err = ErrorInfo(type="InfrastructureError", message=f"tau2 ended the simulation: {why}")
            attempts.append(Attempt(**base, status=Status.INFRA_ERROR, error=err))
            continue
        if reward is None:
            err = ErrorInfo(type="NoReward", message=f"no reward recorded; the simulation ended {why}")
            attempts.append(Attempt(**base, status=Status.ERROR, error=err))
            continue
        metrics = {"reward": reward}
        for key, value in ((reward_info or {}).get("reward_breakdown") or {}).items():
            if (v := _number(value)) is not None:
                metrics[f"reward.{key}"] = v
        basis |= {str(b) for b in (reward_info or {}).get("reward_basis") or []}
        for m, v in metrics.items():
            kinds.setdefault(m, set()).add(v in (0.0, 1.0))
        ok = _passes(reward, threshold)
        attempts.append(
            Attempt(
                **base,
                status=Status.PASS if ok else Status.FAIL,
                score=min(max(reward, 0.0), 1.0),
                metrics=metrics,
                error=None if ok else ErrorInfo(type="RewardBelowPass", message=f"reward {reward:g} ({why})"),
            )
        )
    task_ids = [str(t.get("id")) for t in data.get("tasks") or [] if isinstance(t, dict)]
    cases = list(dict.fromkeys([*task_ids, *(a.case_id for a in attempts)]))
    scorers = sorted(basis) or ["reward"]
    return Imported(
        tool="tau2",
        tool_version=f"tau2-bench {str(info.get('git_commit') or 'unknown')[:12]}",
        task=f"tau2-{domain}",
        task_version=(
            f"{len(cases)} tasks (reward basis {', '.join(scorers)}); user simulator "
            f"{user.get('implementation') or '?'} {user.get('llm') or '?'}"
        ),
        model=str(agent.get("llm") or "") or None,
        subject=str(agent.get("implementation") or "") or None,
        scorers=scorers,
        attempts=attempts,
        cases=[(c, domain) for c in cases],
        iterations=max([int(info.get("num_trials") or 1), *(a.iteration + 1 for a in attempts)]),
        started_at=started,
        metric_specs=[
            MetricSpec(name=m, kind="proportion" if all(k) else "continuous")
            for m, k in sorted(kinds.items())
        ],
        provenance={
            "tau2_git_commit": info.get("git_commit"),
            "seed": info.get("seed"),
            "max_steps": info.get("max_steps"),
            "max_errors": info.get("max_errors"),
            "agent_llm_args": agent.get("llm_args"),
            "user_llm": user.get("llm"),
        },
        notes=[
            _pass_note(threshold),
            "an infrastructure_error simulation is INFRA_ERROR (tau2 leaves it out)",
        ],
    )


def _pass_note(threshold: float | None) -> str:
    rule = (
        "reward 1 (within 1e-6), as tau2-bench counts a success"
        if threshold is None
        else (f"a reward of at least {threshold:g} (--pass-threshold)")
    )
    return f"a simulation passes at {rule}; its trials are the repeats that pass^k folds"


def _read_tau1(path: Path, rows: list[Any], threshold: float | None) -> Imported:
    when = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
    named = _TAU1_NAME.match(path.name)
    attempts: list[Attempt] = []
    for n, row in enumerate(rows):
        try:
            case_id, trial, reward = str(int(row["task_id"])), int(row["trial"]), float(row["reward"])
            info = row.get("info") or {}
            _ = row["traj"]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ForeignFileError(
                path, f"{EXPECTED}: entry {n} has no task_id, reward, traj and trial"
            ) from None
        base: dict[str, Any] = {"case_id": case_id, "iteration": trial, "started_at": when}
        cost = _number(info.get("total_cost"))
        if cost is not None:
            base["usage"] = Usage(cost_usd=cost, cost_source="harness_counts")
        if "error" in info:  # tau-bench's run() wrote the exception of a task that raised, with reward 0
            message = str(info["error"])[:2000]
            infra = _INFRA.search(message)
            err = ErrorInfo(type=infra.group(1) if infra else "SolveError", message=message)
            status = Status.INFRA_ERROR if infra else Status.ERROR
            attempts.append(Attempt(**base, status=status, error=err))
            continue
        ok = _passes(reward, threshold)
        attempts.append(
            Attempt(
                **base,
                status=Status.PASS if ok else Status.FAIL,
                score=min(max(reward, 0.0), 1.0),
                metrics={"reward": reward},
                details={"instruction": (info.get("task") or {}).get("instruction")},
                error=None if ok else ErrorInfo(type="RewardBelowPass", message=f"reward {reward:g}"),
            )
        )
    cases = sorted({a.case_id for a in attempts}, key=int)
    model = named.group("model") if named else None
    rewards = [a.metrics["reward"] for a in attempts if "reward" in a.metrics]
    return Imported(
        tool="tau2",
        tool_version="tau-bench",
        task="tau-bench",
        task_version=f"{len(cases)} tasks; user simulator {named.group('user') if named else '?'}",
        model=model,
        subject=named.group("agent") if named else None,
        scorers=["reward"],
        attempts=attempts,
        cases=[(c, "default") for c in cases],
        iterations=max((a.iteration + 1 for a in attempts), default=1),
        started_at=when,
        metric_specs=[
            MetricSpec(
                name="reward", kind="proportion" if all(r in (0.0, 1.0) for r in rewards) else "continuous"
            )
        ],
        provenance={
            "file_name": path.name,
            "temperature": named.group("temp") if named else None,
            "user_strategy": named.group("strategy") if named else None,
        },
        notes=[
            _pass_note(threshold),
            "a task that raised is ERROR, or INFRA_ERROR when the provider could not answer (connection, rate "
            "limit, auth, timeout)",
        ],
    )
