"""`assay view`: serve the run directories under --dir read-only, or write them as a static bundle."""

from __future__ import annotations

from pathlib import Path

import click

from assay.errors import ConfigError

_P = click.Path(path_type=Path)


@click.command("view")
@click.option(
    "--dir",
    "results_dir",
    type=_P,
    default=Path("results"),
    envvar="ASSAY_RESULTS_DIR",
    show_default=True,
    help="Folder holding run directories.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (loopback unless you name another).",
)
@click.option("--port", type=int, default=8765, show_default=True, help="Port to listen on.")
@click.option(
    "--bundle",
    type=_P,
    default=None,
    help="Write the pages as a static site to this new folder instead of serving.",
)
@click.option(
    "--backlog-target",
    type=click.FloatRange(0, 1),
    default=None,
    help="Target line of the agent backlog pass rate on the trends page.",
)
def view_command(
    results_dir: Path, host: str, port: int, bundle: Path | None, backlog_target: float | None
) -> None:
    """Browse runs, a run's cases, comparisons and trends in a browser (read-only).

    The compare page's verdict and exit code are `assay compare`'s. With --bundle, nothing is served:
    the same pages are written to OUT and work opened from file://.
    """
    from assay.view import Site, serve, write_bundle
    from assay.view.app import LOOPBACK

    site = Site(results_dir, backlog_target)
    if bundle is not None:
        n = write_bundle(site, bundle)
        click.echo(f"wrote {n} files to {bundle}; open {bundle / 'index.html'}")
        return
    if not host:
        raise ConfigError("an empty address", path="--host")
    if host not in LOOPBACK:
        click.echo(f"warning: serving on {host}: anyone who can reach it can read these runs", err=True)
    click.echo(f"assay view: http://{'[' + host + ']' if ':' in host else host}:{port}/ (Ctrl-C stops)")
    serve(site, host=host, port=port)
