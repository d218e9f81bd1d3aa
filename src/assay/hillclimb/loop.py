"""The loop: split, measure both splits, then one fixer edit per round, kept only on a real train gain with no
held-out regression; stops after 2 flat rounds, ``rounds`` rounds, ``max_cost`` or ``max_wall_s``.

Every step is written to ``fix_history.json`` before the next starts, so :func:`resume_hillclimb` picks the loop
up at the round and phase it was in (a measurement half done is resumed as an eval run is; a fixer cut off is
run again on a fresh copy).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.agents import Limits
from assay.errors import ConfigError
from assay.hillclimb import _git
from assay.hillclimb._edits import (
    added_lines,
    apply_edit,
    copy_profile,
    find_leaks,
    profile_error,
    profile_text,
    take_edit,
)
from assay.hillclimb._fixer import build_fixer, fixer_prompt, run_fixer
from assay.hillclimb._history import FixHistory, RoundRecord, SplitScore, load_history
from assay.hillclimb._measure import decide, measure
from assay.hillclimb._noise_pick import pick_noise
from assay.hillclimb._rollup import failing_attempts, rollup
from assay.hillclimb._split import DEFAULT_SALT, split_cases
from assay.hillclimb._target import Target, get_target

__all__ = ["FLAT_ROUNDS", "MIN_ITERATIONS", "HillclimbConfig", "resume_hillclimb", "run_hillclimb"]

FLAT_ROUNDS = 2
#: model calls one fixer run may make (a file or two read, one edit, an answer)
FIXER_STEPS = 12
MIN_ITERATIONS = 3


@dataclass
class HillclimbConfig:
    fixer: str
    benchmark: str = "agent"
    #: the benchmark's own options (``suite``, ``category``, ``model``, ``judge_model``, ``scenarios_dir``, caps)
    eval_options: dict[str, Any] = field(default_factory=dict)
    fixer_model: str | None = None
    #: reference fixer only: every model call must call this tool (a weak model never calls one by itself)
    fixer_tool: str | None = None
    #: run the fixer under bubblewrap: it sees its copy of the profile and nothing else
    fixer_fence: bool = False
    rounds: int = 5
    iterations: int = MIN_ITERATIONS
    salt: str = DEFAULT_SALT
    noise: Path | None = None
    max_cost: float | None = None
    max_wall_s: float | None = None
    profile: Path | None = None
    out: Path | None = None
    results_dir: Path = Path("results")
    branch: str | None = None
    fixer_limits: Limits = field(default_factory=lambda: Limits(wall_clock_s=900.0, max_steps=FIXER_STEPS))
    progress: bool = False
    echo: Any = print


def default_out(results_dir: Path) -> Path:
    """``<results>/hillclimb-<UTC time>``: the loop's folder when ``--out`` is not given."""
    return (Path(results_dir) / f"hillclimb-{datetime.now(UTC):%Y%m%dT%H%M%SZ}").resolve()


def _out_dir(config: HillclimbConfig) -> Path:
    return Path(config.out).resolve() if config.out is not None else default_out(config.results_dir)


def _check_out(repo: Path, out: Path) -> None:
    if out.is_relative_to(repo) and not _git.is_ignored(repo, out):
        raise ConfigError(
            f"--out {out}: inside the git tree and not ignored; the loop's runs would dirty the tree it edits "
            "(put it under an ignored folder such as results/, or outside the repository)"
        )
    if (out / "fix_history.json").exists():
        raise ConfigError(f"--out {out}: holds a hillclimb already; resume it with --resume {out}")


def run_hillclimb(config: HillclimbConfig) -> FixHistory:
    """Start a loop (see the module doc); Ctrl-C stops it resumably."""
    from assay._util import run_interruptible

    return run_interruptible(_start(config))


def resume_hillclimb(directory: Path, echo: Any = print, progress: bool = False) -> FixHistory:
    from assay._util import run_interruptible

    return run_interruptible(_resume(Path(directory).resolve(), echo, progress))


def _own_profile(given: Path | None) -> Path:
    """The profile to climb: a folder under the git repository of the current directory (the built-in one
    lives in assay's own install and is never edited: a copy in the user's repository is)."""
    from assay.agents.reference import INIT_COMMAND

    if given is None:
        raise ConfigError(
            "--profile DIR is required: hillclimb edits a profile in your repository, not assay's built-in one; "
            f"copy it with `{INIT_COMMAND}`, commit it, then pass --profile agent-profile"
        )
    profile = Path(given).resolve()
    if not profile.is_dir():
        raise ConfigError("--profile: not a folder", path=str(profile))
    here = _git.current_repo(Path.cwd())
    if here is None or not profile.is_relative_to(here):
        where = f"the repository of the current directory ({here})" if here else "a git repository"
        raise ConfigError(
            f"--profile {given}: not under {where}; hillclimb climbs only a profile of the repository it runs "
            f"from (run it there, or copy the profile in with `{INIT_COMMAND}`)"
        )
    if _git.is_ignored(here, profile):  # e.g. the built-in profile of a virtualenv kept in the repository
        raise ConfigError(
            f"--profile {given}: ignored by git, so its edits could not be committed; copy it with "
            f"`{INIT_COMMAND}` and climb the copy"
        )
    return profile


async def _start(config: HillclimbConfig) -> FixHistory:
    if config.iterations < MIN_ITERATIONS:
        raise ConfigError(
            f"--iterations {config.iterations}: hillclimb measures each split {MIN_ITERATIONS}+ times"
        )
    if config.rounds < 1:
        raise ConfigError("--rounds must be at least 1")
    target = get_target(config.benchmark, config.eval_options)
    profile = _own_profile(config.profile)
    err = profile_error(profile)
    if err is not None:
        raise ConfigError(f"--profile: the profile does not load: {err}", path=str(profile))
    repo = _git.repo_root(profile)
    _git.refuse_dirty(repo)
    out = _out_dir(config)
    _check_out(repo, out)
    split = split_cases(target.cases(), config.salt)
    if not split.train or not split.heldout:
        raise ConfigError(
            f"{len(split.train) + len(split.heldout)} {target.benchmark} case(s) selected: too few to split into "
            "train and held-out; select more (--category, --suite) or rotate --salt"
        )
    if config.fixer_fence:
        from assay.agents.fence import require_fence

        require_fence()  # refused here, before a branch is made, where bubblewrap cannot run
    noise, noise_line = pick_noise(config.noise, target.noise_fit(), config.results_dir)
    await (
        build_fixer(config.fixer, config.fixer_model, config.fixer_tool)
    ).close()  # an unknown fixer is refused before any edit
    base_commit = _git.head_commit(repo)
    branch = _git.create_branch(repo, config.branch)
    history = FixHistory(
        benchmark=target.benchmark,
        suite=target.suite,
        category=target.category,
        eval_options={k: str(v) if isinstance(v, Path) else v for k, v in config.eval_options.items()},
        fixer=config.fixer,
        fixer_model=config.fixer_model,
        fixer_tool=config.fixer_tool,
        fixer_fence=config.fixer_fence,
        repo=str(repo),
        profile=str(profile),
        branch=branch,
        base_commit=base_commit,
        iterations=config.iterations,
        noise=str(noise) if noise else None,
        rounds_max=config.rounds,
        max_cost=config.max_cost,
        max_wall_s=config.max_wall_s,
        split=split,
        fixer_limits=config.fixer_limits.model_dump(),
    )
    history.save(out)
    config.echo(
        f"hillclimb: {out} (branch {branch}); train {len(split.train)}, held-out {len(split.heldout)}"
    )
    config.echo(noise_line)
    return await _Loop(history, out, target, config.echo, config.progress).run()


async def _resume(directory: Path, echo: Any, progress: bool) -> FixHistory:
    history = load_history(directory)
    if history.status == "finished":
        raise ConfigError(f"--resume {directory}: the loop finished ({history.stop_reason})")
    repo = Path(history.repo)
    branch = _git.current_branch(repo)
    if branch != history.branch:
        raise ConfigError(
            f"--resume: the tree is on branch {branch!r}; switch back to {history.branch!r} first"
        )
    target = get_target(history.benchmark, {"suite": history.suite, **history.eval_options})
    open_round = history.rounds[-1] if history.rounds and history.rounds[-1].phase != "done" else None
    allowed = set(open_round.touched) if open_round is not None and open_round.phase == "measuring" else set()
    stray = [p for p in _git.changed_paths(repo) if p not in allowed]
    profile_rel = Path(history.profile).relative_to(repo).as_posix()
    if open_round is not None and open_round.phase == "fixing":
        # an edit cut off while it was applied: put the profile back, the round starts again
        _git.checkout_paths(repo, [p for p in stray if p.startswith(profile_rel + "/")])
        stray = [p for p in stray if not p.startswith(profile_rel + "/")]
    if stray:
        raise ConfigError(
            f"--resume: files changed since the loop stopped: {', '.join(stray)}", path=str(repo)
        )
    history.status, history.stop_reason = "running", ""
    echo(f"hillclimb: resuming {directory} at round {len(history.rounds) or 'baseline'}")
    return await _Loop(history, directory, target, echo, progress).run()


def _add_cost(total: dict[str, dict[str, Any]], role: str, row: dict[str, Any]) -> None:
    t = total.setdefault(role, {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": None})
    for k in ("calls", "input_tokens", "output_tokens"):
        t[k] = int(t.get(k) or 0) + int(row.get(k) or 0)
    if row.get("cost_usd") is not None:
        t["cost_usd"] = float(t.get("cost_usd") or 0.0) + float(row["cost_usd"])


def _spend(*scores: SplitScore | None) -> dict[str, dict[str, Any]]:
    total: dict[str, dict[str, Any]] = {}
    for s in scores:
        if s is not None:
            for role, row in s.cost.items():
                _add_cost(total, role, row)
    return total


class _Loop:
    def __init__(self, history: FixHistory, out: Path, target: Target, echo: Any, progress: bool) -> None:
        self.h, self.out, self.target, self.echo, self.progress = history, out, target, echo, progress
        self.limits = Limits(**history.fixer_limits)
        self.repo, self.profile = Path(history.repo), Path(history.profile)
        self.noise = Path(history.noise) if history.noise else None
        self.t0 = time.monotonic()
        self.elapsed0 = history.elapsed_s

    def save(self) -> None:
        self.h.elapsed_s = round(self.elapsed0 + time.monotonic() - self.t0, 3)
        self.h.save(self.out)

    async def _measure(self, ids: list[str], where: str) -> SplitScore:
        return await measure(
            self.target, ids, self.profile, self.out / where, self.h.iterations, progress=self.progress
        )

    async def run(self) -> FixHistory:
        try:
            await self._baseline()
            while True:
                why = self._stop_reason()
                if why:
                    break
                await self._round()
            self._finish(why)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.h.status, self.h.stop_reason = "interrupted", "interrupted (Ctrl-C)"
            self.save()
            raise
        except Exception as exc:
            self.h.status, self.h.stop_reason = "stopped", f"{type(exc).__name__}: {exc}"
            self.save()
            raise
        return self.h

    async def _baseline(self) -> None:
        h = self.h
        if h.baseline_train is None:
            h.baseline_train = await self._measure(h.split.train, "baseline/train")
            self.save()
        if h.baseline_heldout is None:
            h.baseline_heldout = await self._measure(h.split.heldout, "baseline/heldout")
            self.save()
        if self.noise is not None:  # a noise file of another suite or model is refused before any edit
            from assay.gate import compare

            comp = compare(Path(h.baseline_train.run_dir), Path(h.baseline_train.run_dir), noise=self.noise)
            if not comp.comparable:
                raise ConfigError(f"--noise: {'; '.join(comp.not_comparable)}", path=str(self.noise))

    def _stop_reason(self) -> str:
        h = self.h
        done = [r for r in h.rounds if r.phase == "done"]
        if h.rounds and h.rounds[-1].phase != "done":
            return ""  # a round in progress (resumed) finishes first
        flat = 0
        for r in reversed(done):
            if not r.flat:
                break
            flat += 1
        if flat >= FLAT_ROUNDS:
            return f"{FLAT_ROUNDS} flat rounds in a row (no edit kept)"
        if len(done) >= h.rounds_max:
            return f"{h.rounds_max} round(s) done (--rounds)"
        spent = self._cost_usd()
        if h.max_cost is not None and spent is not None and spent >= h.max_cost:
            return f"spent ${spent:.4f}, at or over --max-cost ${h.max_cost:g}"
        wall = self.elapsed0 + time.monotonic() - self.t0
        if h.max_wall_s is not None and wall >= h.max_wall_s:
            return f"ran {wall:.0f} s, at or over --max-wall {h.max_wall_s:g} s"
        return ""

    def _totals(self) -> dict[str, dict[str, Any]]:
        total = _spend(self.h.baseline_train, self.h.baseline_heldout)
        for r in self.h.rounds:
            for role, row in r.cost.items():
                _add_cost(total, role, row)
        return total

    def _cost_usd(self) -> float | None:
        known = [row["cost_usd"] for row in self._totals().values() if row.get("cost_usd") is not None]
        return sum(known) if known else None

    async def _round(self) -> None:
        h = self.h
        if not h.rounds or h.rounds[-1].phase == "done":
            train, held = h.current()
            h.rounds.append(RoundRecord(round=len(h.rounds) + 1, train_before=train, heldout_before=held))
            self.save()
        r = h.rounds[-1]
        t0 = time.monotonic()
        if r.phase == "fixing":
            await self._fix(r)
        if r.phase == "measuring":
            await self._judge(r)
        r.elapsed_s = round((r.elapsed_s or 0.0) + time.monotonic() - t0, 3)
        self.echo(f"round {r.round}: {r.outcome} - {r.reason}")
        self.save()

    async def _fix(self, r: RoundRecord) -> None:
        by_case: dict[str, list[Any]] = {}
        for a in failing_attempts(r.train_before.run_dir):
            by_case.setdefault(a.case_id, []).append(a)
        if not by_case:
            r.outcome, r.reason, r.phase = "no_edit", "no train scenario fails: nothing to fix", "done"
            return
        from assay.runs.rundir import write_artifact, write_model

        where = self.out / f"round-{r.round}"
        copy = copy_profile(self.profile, where / "fixer-workdir")
        files = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
        prompt = fixer_prompt(list(by_case.values()), self.target.failure_view, files)
        write_artifact(where / "fixer-prompt.md", prompt)
        harness = build_fixer(self.h.fixer, self.h.fixer_model, self.h.fixer_tool)
        try:
            result = await run_fixer(harness, prompt, copy, self.limits, fence=self.h.fixer_fence)
        finally:
            await harness.close()
        write_model(where / "fixer-result.json", result)  # the fixer's transcript and tool calls
        r.fixer_answer = result.answer[:4000]
        r.cost["fixer"] = {
            "calls": result.usage.calls,
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cost_usd": result.usage.cost_usd,
        }
        if result.infra_error:
            from assay.hillclimb._measure import Outage

            raise Outage(f"the fixer's backend failed: {result.infra_error}")
        edit = take_edit(self.profile, copy)
        if edit.empty:
            said = result.error or (f"cut off by {result.cut_off}" if result.cut_off else "")
            r.outcome, r.phase = "no_edit", "done"
            r.reason = "the fixer changed nothing" + (f" ({said})" if said else "")
            return
        self._apply(r, edit)

    def _reject(self, r: RoundRecord, outcome: str, reason: str, paths: list[str]) -> None:
        _git.checkout_paths(self.repo, paths)
        r.outcome, r.reason, r.phase = outcome, reason, "done"  # type: ignore[assignment]

    def _apply(self, r: RoundRecord, edit: Any) -> None:
        before = profile_text(self.profile)
        apply_edit(self.profile, edit)
        changed = _git.changed_paths(self.repo)
        rel = self.profile.relative_to(self.repo).as_posix() + "/"
        outside = [p for p in changed if not p.startswith(rel)]
        r.touched = [p for p in changed if p.startswith(rel)]
        r.diff = _git.diff_paths(self.repo, r.touched)
        if outside:
            self._reject(r, "rejected", f"touched files outside the profile: {', '.join(outside)}", changed)
            return
        leaks = find_leaks(added_lines(r.diff), self.target.forbidden(), before)
        if leaks:
            self._reject(r, "rejected", "special-cases the suite: " + "; ".join(leaks), changed)
            return
        err = profile_error(self.profile)
        if err is not None:
            self._reject(r, "rejected", f"the edited profile does not load: {err}", changed)
            return
        if not r.touched:
            self._reject(r, "no_edit", "the edit changed nothing git tracks", changed)
            return
        r.phase = "measuring"
        self.save()

    async def _judge(self, r: RoundRecord) -> None:
        h = self.h
        if r.train_after is None:
            r.train_after = await self._measure(h.split.train, f"round-{r.round}/train")
            self.save()
        if r.heldout_after is None:
            r.heldout_after = await self._measure(h.split.heldout, f"round-{r.round}/heldout")
            self.save()
        for role, row in _spend(r.train_after, r.heldout_after).items():
            _add_cost(r.cost, role, row)
        kept, why, tv, hv = decide(
            (r.train_before, r.train_after), (r.heldout_before, r.heldout_after), self.noise
        )
        r.train_verdict, r.heldout_verdict, r.reason = tv, hv, why
        if kept:
            r.commit = _git.commit_paths(self.repo, r.touched, f"hillclimb round {r.round}: {why}")
            r.outcome = "kept"
        else:
            _git.checkout_paths(self.repo, r.touched)
            r.outcome = "reverted"
        r.phase = "done"

    def _finish(self, why: str) -> None:
        h = self.h
        train, held = h.current()
        base_t, base_h = h.baseline_train, h.baseline_heldout
        assert base_t is not None and base_h is not None
        h.train_gain = _gain(base_t, train)
        h.heldout_gain = _gain(base_h, held)
        if h.train_gain is not None and h.train_gain > 0 and h.heldout_gain is not None:
            h.overfitting = h.heldout_gain < h.train_gain / 2
            if h.overfitting:
                h.overfitting_note = (
                    f"held-out gain {h.heldout_gain:+.2f} is under half the train gain {h.train_gain:+.2f}"
                )
        h.rollup = rollup([train.run_dir, held.run_dir])
        h.cost_total = self._totals()
        h.status, h.stop_reason, h.finished_at = "finished", why, datetime.now(UTC)
        self.save()
        from assay.hillclimb.report import write_report

        write_report(h, self.out)


def _gain(before: SplitScore, after: SplitScore) -> float | None:
    if before.pass_rate is None or after.pass_rate is None:
        return None
    return round(after.pass_rate - before.pass_rate, 6)
