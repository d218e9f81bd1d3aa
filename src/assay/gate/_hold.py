"""``gate.hold``: hold a finished run to its options once (compare, expectations, completeness, baseline).

The engine calls :func:`hold` after folding the scorecard and before it writes the reports, which render the
:class:`~assay.gate.Verdict`; the CLI prints it and exits with its code. ``assay compare`` and ``assay gate``
build their verdicts from the same pieces (:func:`~assay.gate.verdict_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from assay._util import Scrubber
from assay.errors import ConfigError, ExitCode, UsageError
from assay.runs import Attempt, RunMeta, Scorecard
from assay.runs.rundir import write_artifact, write_model

from ._baseline import check_baseline_iterations
from ._baseline import save_baseline as _save_baseline
from ._complete import unspent_cases
from ._expect import find_expectations, gate, load_expectations
from ._load import LoadedRun, load_run
from ._render import comparison_markdown
from ._verdict import VERDICT, Finding, GateOptions, Verdict, verdict_of
from .comparison import compare

COMPARISON_JSON = "comparison.json"
COMPARISON_MD = "comparison.md"
GATE_JSON = "gate.json"


def check_options(options: GateOptions, iterations: int | None = None) -> None:
    """Refuse what would fail only after the run was measured: a missing or unreadable --compare, --noise or
    --expect, --noise or --allow-subject-change without --compare and, given the run's ``iterations``, a 1-iteration --save-baseline
    without --force."""
    for path, flag in (
        (options.compare, "--compare"),
        (options.noise, "--noise"),
        (options.expect, "--expect"),
    ):
        if path is not None and not Path(path).exists():
            raise ConfigError(f"{flag} {path}: no such file or folder")
    if options.noise is not None and options.compare is None:
        raise ConfigError("--noise sets the noise floor of --compare; pass --compare BASELINE too")
    if options.allow_subject_change and options.compare is None:
        raise ConfigError("--allow-subject-change applies to --compare; pass --compare BASELINE too")
    if options.compare is not None:
        load_run(options.compare)
    if options.noise is not None:
        from assay.stats import load_noise

        load_noise(options.noise)
    if options.expect is not None:
        load_expectations(Path(options.expect))
    if options.save_baseline is not None and iterations is not None:
        check_baseline_iterations(iterations, options.force, f"--save-baseline {options.save_baseline}")


def hold(
    scorecard: Scorecard,
    options: GateOptions,
    *,
    meta: RunMeta | None = None,
    run_dir: Path | None = None,
    attempts: Iterable[Attempt] | None = None,
    stopped: str | None = None,
    stopped_code: int = int(ExitCode.NOT_COMPARABLE),
    scrubber: Scrubber | None = None,
) -> Verdict:
    """Compare, gate and check completeness of a finished run; save the baseline when the verdict allows.

    ``attempts`` (each case's latest) let CI outputs fail a case that measured nothing; a run ``stopped`` early
    (an outage: ``stopped_code`` 3; a configuration error: 1) is neither compared, gated nor saved, and its
    stop wins. With ``run_dir`` the verdict lands in ``verdict.json`` beside ``comparison.json``,
    ``comparison.md`` and ``gate.json``. A missing --compare/--expect file or a 1-iteration baseline without
    --force raises (the eval command refuses them before the run: :func:`check_options`); a baseline refused
    after the run (an incomplete run) is exit 1 in the verdict.
    """
    if options.save_baseline is not None:
        check_baseline_iterations(
            scorecard.iterations, options.force, f"--save-baseline {options.save_baseline}"
        )
    run = LoadedRun(path=Path(run_dir) if run_dir is not None else Path(f"<{scorecard.run_id}>"),
                    scorecard=scorecard, meta=meta)  # fmt: skip
    comp = expectations = None
    if stopped is None:
        if options.compare is not None:
            comp = compare(
                options.compare,
                run,
                noise=options.noise,
                require_complete=options.require_complete,
                allow_subject_change=options.allow_subject_change,
            )
        if options.expect is not None or options.enforce or (options.gated and find_expectations(scorecard)):
            expectations = gate(run, expect=options.expect, enforce=options.enforce)

    def held(unspent: Sequence[str] = (), refused: Finding | None = None) -> Verdict:
        return verdict_of(
            scorecard,
            options,
            comparison=comp,
            expectations=expectations,
            unspent=unspent,
            stopped=stopped,
            stopped_code=stopped_code,
            refused=refused,
        )

    # the baseline is gated on the comparison, the expectations and completeness, as before CI outputs count
    verdict = first = held()
    saved, refused = None, None
    if options.save_baseline is not None and stopped is None:
        saved, refused = _keep_baseline(first, run, options)
    unspent = (
        unspent_cases(attempts, stopped is not None) if options.fail_unspent and attempts is not None else []
    )
    if unspent or refused is not None:
        verdict = held(unspent, refused)
    if options.save_baseline is not None and stopped is None:
        why = refused.reason if refused is not None else None
        if saved is None and refused is None:
            why = _not_saved(first, options)
        verdict = verdict.model_copy(update={"baseline_saved": saved, "baseline_not_saved": why})
    if run_dir is not None:
        save_verdict(Path(run_dir), verdict, scrubber)
    return verdict


def _not_saved(verdict: Verdict, options: GateOptions) -> str:
    what = {2: "regressed or missed its expectations", 3: "is not comparable with --compare"}.get(
        verdict.exit_code, "failed"
    )
    return (
        f"--save-baseline {options.save_baseline}: not saved: this run {what} (exit {verdict.exit_code}); "
        "a baseline is saved only from a run that passes its --compare/--expect checks"
    )


def _keep_baseline(
    verdict: Verdict, run: LoadedRun, options: GateOptions
) -> tuple[str | None, Finding | None]:
    """Save the run as the baseline only when its verdict is ok (a run that regressed, missed its
    expectations or is not comparable must not become the bar): where it was saved, or the exit-1 finding of
    a baseline refused after the run (an incomplete run, a file where the folder should be)."""
    if verdict.exit_code != ExitCode.OK:
        return None, None
    try:
        return str(_save_baseline(run, options.save_baseline, force=options.force)), None  # type: ignore[arg-type]
    except UsageError as exc:
        return None, Finding(
            int(ExitCode.USAGE), f"--save-baseline {options.save_baseline}: not saved: {exc}"
        )


def save_verdict(
    run_dir: Path, verdict: Verdict, scrubber: Scrubber | None = None, *, verdict_file: bool = True
) -> None:
    """``verdict.json`` (unless not ``verdict_file``: `assay compare` leaves the run's own), and the files
    users read: ``comparison.json``/``.md`` and ``gate.json``."""
    if verdict.comparison is not None:
        write_model(run_dir / COMPARISON_JSON, verdict.comparison, scrubber)
        write_artifact(run_dir / COMPARISON_MD, comparison_markdown(verdict.comparison), scrubber)
    if verdict.expectations is not None:
        write_model(run_dir / GATE_JSON, verdict.expectations, scrubber)
    if verdict_file:
        write_model(run_dir / VERDICT, verdict, scrubber)
