"""`assay eval sessions`: the shared eval command of the sessions benchmark, plus --dataset-only and --explain.

--dataset-only builds ``dataset.json`` (in --out, or a new folder in --results-dir) and stops; a full run
writes it in its run directory, and its report leads with the judge's number.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from assay.cli._eval import make_command
from assay.evals.sessions import SessionsBenchmark


def _dataset_only(kwargs: dict[str, Any]) -> None:
    from assay.evals.sessions import dataset_for, explain, write_dataset

    if kwargs.get("dataset"):
        raise click.UsageError("--dataset-only builds a dataset; --dataset replays one: give one")
    if kwargs.get("limit"):
        raise click.UsageError("--limit picks the requests a run replays; --dataset-only writes every one")
    dataset, extractions = dataset_for(kwargs)
    if kwargs.get("explain"):
        click.echo(explain(extractions))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = kwargs["out"] or Path(kwargs["results_dir"]) / f"sessions-dataset-{stamp}"
    path = write_dataset(dataset, Path(folder))
    click.echo(
        f"{len(dataset.cases)} case(s) kept, {len(dataset.dropped)} dropped, from {len(dataset.sources)} file(s)"
    )
    click.echo(f"dataset: {path}")


def _lead_report(run_dir: Path) -> None:
    """Put the judge's number right under the report's title (report.md and report.html)."""
    import json

    from assay._util import Scrubber, write_scrubbed
    from assay.evals.sessions import lead_line
    from assay.report import render_html
    from assay.runs import Scorecard

    md_path, card_path = run_dir / "report.md", run_dir / "scorecard.json"
    if not md_path.is_file() or not card_path.is_file():
        return
    card = Scorecard.model_validate(json.loads(card_path.read_text(encoding="utf-8")))
    summary = card.extra.get("sessions") or {}
    title, _, rest = md_path.read_text(encoding="utf-8").partition("\n")
    lead = lead_line(summary)
    if rest.lstrip("\n").startswith(lead):
        return  # already there
    md = f"{title}\n\n{lead}\n{rest}"
    write_scrubbed(md_path, md, Scrubber())
    write_scrubbed(run_dir / "report.html", render_html(card, md, run_dir), Scrubber())


def _build() -> click.Command:
    command = make_command("sessions", SessionsBenchmark)
    run = command.callback
    assert run is not None

    @click.pass_context
    def callback(ctx: click.Context, **kwargs: Any) -> None:
        if kwargs.get("dataset_only"):
            _dataset_only(kwargs)
            return
        results = Path(kwargs["results_dir"])
        before = set(results.glob("sessions-replay-*"))
        try:
            run(**kwargs)
        finally:  # the run ends by exiting (its exit code); its report then gets the lead
            made = sorted(set(results.glob("sessions-replay-*")) - before)
            target = kwargs.get("out") or kwargs.get("resume") or (made[-1] if made else None)
            if target is not None:
                _lead_report(Path(target))

    command.callback = callback
    return command


sessions_command = _build()
