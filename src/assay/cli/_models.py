"""`assay models list|try` and `assay serve-local`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click
from rich.console import Console


@click.group(name="models")
def models_group() -> None:
    """Chat model providers: list them, try one."""


@models_group.command(name="list")
def list_command() -> None:
    """Known providers, how each is configured, and whether it looks ready here."""
    from assay.models.trial import list_providers

    rows, card = list_providers()
    console = Console(highlight=False)
    for r in rows:
        status = "[green]ready[/green]" if r.ready else f"[yellow]not ready: {r.note}[/yellow]"
        console.print(f"[bold]{r.name}[/bold]  {status}")
        console.print(f"  {r.summary}", soft_wrap=True)
        console.print(f"  e.g.  {r.example}", soft_wrap=True)
        if r.env:
            console.print(f"  env   {', '.join(r.env)}", soft_wrap=True)
    console.print(f"prices: {card}", soft_wrap=True)


@models_group.command(name="try")
@click.argument("model")
@click.argument("prompt")
@click.option("--system", help="A system prompt.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--temperature", type=float, help="Sampling temperature (provider default if unset).")
@click.option("--base-url", help="Server URL for openai-compat/anthropic (or ASSAY_OPENAI_BASE_URL).")
@click.option("--api-key", help="API key (better: OPENAI_API_KEY / ANTHROPIC_API_KEY in the environment).")
@click.option("--model-path", type=click.Path(path_type=Path), help="GGUF file for local/ models.")
@click.option("--no-stream", is_flag=True, help="One plain request instead of streaming.")
def try_command(
    model: str,
    prompt: str,
    system: str | None,
    max_tokens: int,
    temperature: float | None,
    base_url: str | None,
    api_key: str | None,
    model_path: Path | None,
    no_stream: bool,
) -> None:
    """Send PROMPT to MODEL once; print the answer, tokens, TTFT, tokens/s and cost.

    MODEL is provider/model, e.g. local/smollm2, openai-compat/NAME@http://127.0.0.1:8080/v1,
    anthropic/claude-sonnet-4-5, scripted/FILE.yaml.
    """
    from assay.models import try_model

    model_options: dict[str, object] = {}
    if base_url:
        model_options["base_url"] = base_url
    if api_key:
        model_options["api_key"] = api_key
    if model_path:
        model_options["model_path"] = model_path

    def show(text: str) -> None:
        click.echo(text, nl=False)
        sys.stdout.flush()

    result = asyncio.run(
        try_model(
            model,
            prompt,
            system=system,
            stream=not no_stream,
            on_text=show,
            model_options=model_options,
            max_tokens=max_tokens,
            temperature=temperature,
        )
    )
    for call in result.output.tool_calls:
        click.echo(f"\n[tool call] {call.name}({call.arguments})", nl=False)
    click.echo()
    click.echo(result.summary(), err=True)


@click.command(name="serve-local")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="0 picks a free port."
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--model-path",
    type=click.Path(path_type=Path),
    help="Any GGUF (default: the embedded SmolLM2-135M-Instruct).",
)
@click.option("--ctx-size", type=click.IntRange(min=128), default=2048, show_default=True)
@click.option("--n-threads", type=click.IntRange(min=1), help="CPU threads (llama.cpp default if unset).")
def serve_local_command(
    port: int, host: str, model_path: Path | None, ctx_size: int, n_threads: int | None
) -> None:
    """Serve the embedded model over llama.cpp's OpenAI-compatible HTTP API until Ctrl-C."""
    from assay.models import serve_forever

    def ready(base_url: str, model_string: str) -> None:
        click.echo(f"serving {model_string}")
        click.echo(f"  base URL: {base_url}   (Ctrl-C to stop)")
        sys.stdout.flush()

    serve_forever(
        model_path=model_path,
        port=port or None,
        host=host,
        ctx_size=ctx_size,
        n_threads=n_threads,
        on_ready=ready,
    )
