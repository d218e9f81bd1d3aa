"""`assay gateway`: the model gateway in the foreground (OpenAI and Anthropic on loopback, any model behind)."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command(name="gateway")
@click.option(
    "--model", "model", required=True, help="The upstream: an assay model spec, e.g. local/smollm2."
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0 picks a free port."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="A loopback address.")
@click.option(
    "--log", "log_path", type=click.Path(path_type=Path, dir_okay=False), help="Append call records (JSONL)."
)
@click.option(
    "--rewrite-system/--no-rewrite-system",
    default=None,
    help="Turn system entries after the first turn into user entries [default: on for local/ models].",
)
@click.option(
    "--base-url", help="Server URL for openai-compat/anthropic upstreams (or ASSAY_OPENAI_BASE_URL)."
)
@click.option("--model-path", type=click.Path(path_type=Path), help="GGUF file for local/ upstreams.")
@click.option("--no-preflight", is_flag=True, help="Start without checking that the upstream answers.")
def gateway_command(
    model: str,
    port: int,
    host: str,
    log_path: Path | None,
    rewrite_system: bool | None,
    base_url: str | None,
    model_path: Path | None,
    no_preflight: bool,
) -> None:
    """Serve MODEL to agents: OpenAI chat completions at /v1 and Anthropic Messages at the root.

    The gateway alone holds the upstream's key (from the environment); agents get only its URL. An unreachable
    upstream is answered 503 with `x-assay-infra-error: 1`. Totals: GET /assay/usage. Ctrl-C stops it.
    """
    from assay.agents import Gateway
    from assay.agents.gateway.server import serve_gateway

    options: dict[str, object] = {}
    if base_url:
        options["base_url"] = base_url
    if model_path:
        options["model_path"] = model_path

    def ready(gw: Gateway) -> None:
        click.echo(f"gateway for {gw.upstream.name} on {gw.url}   (Ctrl-C to stop)")
        click.echo(f"  OpenAI base URL:    {gw.openai_base_url}")
        click.echo(f"  Anthropic base URL: {gw.anthropic_base_url}")
        click.echo(
            f"  system rewrite: {'on' if gw.rewrite_system else 'off'}"
            + (f"   log: {log_path}" if log_path else "")
        )
        sys.stdout.flush()

    serve_gateway(
        model,
        port=port,
        host=host,
        log_path=log_path,
        rewrite_system=rewrite_system,
        model_options=options,
        preflight=not no_preflight,
        on_ready=ready,
    )
