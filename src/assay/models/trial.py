"""One call to a model with the figures a person wants to see (``assay models try``), and provider status."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.errors import ConfigError
from assay.models._registry import PROVIDERS, preflight
from assay.models._types import Message, ModelOutput
from assay.models.cost import ENV_VAR as RATE_CARD_ENV
from assay.models.cost import load_rate_card

__all__ = ["ProviderStatus", "TryResult", "list_providers", "try_model"]


@dataclass
class TryResult:
    output: ModelOutput
    model: str
    ttft_s: float | None
    tokens_per_s: float | None
    #: whether ``tokens_per_s`` counts streamed chunks because the server reported no token counts
    rate_from_chunks: bool

    def summary(self) -> str:
        u = self.output.usage
        parts = [f"tokens in={u.input_tokens} out={u.output_tokens}"]
        if u.cache_read_tokens or u.cache_write_tokens:
            parts.append(f"cache read={u.cache_read_tokens} write={u.cache_write_tokens}")
        parts.append("TTFT " + ("n/a" if self.ttft_s is None else f"{self.ttft_s * 1000:.0f} ms"))
        if self.tokens_per_s is None:
            parts.append("tokens/s n/a")
        else:
            unit = "chunks/s (server reported no tokens)" if self.rate_from_chunks else "tokens/s"
            parts.append(f"{self.tokens_per_s:.1f} {unit}")
        if u.cost_usd is None:
            parts.append("cost unknown (no tokens reported or model not in the rate card)")
        else:
            parts.append(f"cost ${u.cost_usd:.6f} ({u.cost_source})")
        return " · ".join(parts)


async def try_model(
    spec: str,
    prompt: str,
    *,
    system: str | None = None,
    stream: bool = True,
    on_text: Callable[[str], None] | None = None,
    model_options: dict[str, Any] | None = None,
    **generate_options: Any,
) -> TryResult:
    """Preflight ``spec``, send ``prompt`` once and measure it (``on_text`` sees the text as it streams)."""
    model = await preflight(spec, **(model_options or {}))
    messages = ([Message("system", system)] if system else []) + [Message("user", prompt)]
    options = {k: v for k, v in generate_options.items() if v is not None}
    if stream and hasattr(model, "stream"):
        chunks = model.stream(messages, **options)
        async for chunk in chunks:
            if on_text is not None and chunk.text:
                on_text(chunk.text)
        output = getattr(chunks, "output", None)
        if output is None:  # a third-party stream without .output
            output = await model.generate(messages, stream=True, **options)
    else:
        output = await model.generate(messages, **options)
        if on_text is not None:
            on_text(output.text)
    t = output.timings
    ttft = t.ttft_s if t is not None else None
    rate, from_chunks = None, False
    if (
        t is not None
        and t.first_token is not None
        and t.last_token is not None
        and t.last_token > t.first_token
    ):
        count = output.usage.output_tokens
        if count == 0:
            count, from_chunks = len([c for c in output.chunks if c.text]), True
        rate = max(0, count - 1) / (t.last_token - t.first_token)
    elif t is not None and t.e2e_s and output.usage.output_tokens:
        rate = output.usage.output_tokens / t.e2e_s
    return TryResult(
        output=output, model=model.name, ttft_s=ttft, tokens_per_s=rate, rate_from_chunks=from_chunks
    )


@dataclass
class ProviderStatus:
    name: str
    example: str
    summary: str
    env: tuple[str, ...]
    ready: bool
    note: str


def list_providers() -> tuple[list[ProviderStatus], str]:
    """Every known provider with whether it looks usable here, and where prices come from."""
    rows = []
    for info in PROVIDERS.values():
        ok, why = info.configured()
        env = tuple(f"{e} (set)" if os.environ.get(e) else e for e in info.env)
        rows.append(ProviderStatus(info.name, info.example, info.summary, env, ok, why))
    card = os.environ.get(RATE_CARD_ENV)
    source = (
        f"{card} (from {RATE_CARD_ENV})" if card else f"shipped rate card (override with {RATE_CARD_ENV})"
    )
    if card:
        try:
            load_rate_card()
        except ConfigError as exc:
            source = f"NOT USABLE: {exc}"
    return rows, source
