"""Pricing calls from a rate card shipped as data (``assay/data/rate_card.json``).

``ASSAY_RATE_CARD=path.json`` replaces the shipped card (same format). Prices are per million tokens;
``cache_read``/``cache_write`` default to the input price when a card leaves them out.

Rules (the issue's contract):

* a price the provider itself reported wins (``cost_source="api_equivalent"``);
* otherwise tokens the harness counted are priced from the card (``"harness_counts"``);
* a call that reached the model but reported no tokens, or a model missing from the card, has
  ``cost_usd=None`` (counted in ``unpriced_calls``), never 0;
* a server on a loopback address that is not in the card is priced at 0 (it is your own machine).
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol, runtime_checkable
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, ValidationError

from assay.errors import ConfigError
from assay.runs import Usage

__all__ = [
    "BillingMeter",
    "ModelPrice",
    "RateCard",
    "is_loopback_url",
    "load_rate_card",
    "metered_usage",
    "price_usage",
]

ENV_VAR = "ASSAY_RATE_CARD"


class ModelPrice(BaseModel):
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


class RateCard(BaseModel):
    schema_version: int = 1
    as_of: str = ""
    currency: str = "USD"
    unit: str = "per million tokens"
    note: str = ""
    models: dict[str, ModelPrice]

    def lookup(self, provider: str, model: str) -> ModelPrice | None:
        """The price of ``provider/model`` (or bare ``model``); the longest matching key wins."""
        names = (f"{provider}/{model}", model)
        best: tuple[int, ModelPrice] | None = None
        for key, price in self.models.items():
            if any(key == n or fnmatch.fnmatchcase(n, key) for n in names):
                exact = any(key == n for n in names)
                rank = len(key) + (10_000 if exact else 0)
                if best is None or rank > best[0]:
                    best = (rank, price)
        return None if best is None else best[1]


@dataclass(frozen=True)
class _Source:
    path: str | None


def load_rate_card(path: str | os.PathLike[str] | None = None) -> RateCard:
    """The rate card at ``path``, else at ``$ASSAY_RATE_CARD``, else the shipped one."""
    chosen = str(path) if path is not None else os.environ.get(ENV_VAR) or None
    return _load(_Source(chosen))


@lru_cache(maxsize=8)
def _load(source: _Source) -> RateCard:
    if source.path is None:
        text = resources.files("assay").joinpath("data/rate_card.json").read_text(encoding="utf-8")
        where = "assay/data/rate_card.json"
    else:
        p = Path(source.path)
        where = f"{source.path} (from {ENV_VAR})" if os.environ.get(ENV_VAR) == source.path else source.path
        if not p.is_file():
            raise ConfigError(f"rate card not found: {where}")
        text = p.read_text(encoding="utf-8")
    try:
        return RateCard.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"rate card is not valid JSON: {exc.msg}", path=where, line=exc.lineno) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"bad rate card entry {loc}: {first['msg']}", path=where) from exc


def is_loopback_url(url: str | None) -> bool:
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def price_usage(
    usage: Usage,
    *,
    provider: str,
    model: str,
    reported_cost: float | None = None,
    tokens_reported: bool = True,
    base_url: str | None = None,
    card: RateCard | None = None,
) -> Usage:
    """Return ``usage`` (one call) with ``cost_usd``/``cost_source``/``unpriced_calls`` filled in."""
    out = usage.model_copy()
    out.calls = max(out.calls, 1)
    if reported_cost is not None:
        out.cost_usd = float(reported_cost)
        out.cost_source = "api_equivalent"
        out.unpriced_calls = 0
        return out
    if not tokens_reported:
        out.cost_usd = None
        out.cost_source = None
        out.unpriced_calls = 1
        return out
    price = (card or load_rate_card()).lookup(provider, model)
    if price is None and is_loopback_url(base_url):
        price = ModelPrice(input=0.0, output=0.0)
    if price is None:
        out.cost_usd = None
        out.cost_source = None
        out.unpriced_calls = 1
        return out
    cache_read = price.cache_read if price.cache_read is not None else price.input
    cache_write = price.cache_write if price.cache_write is not None else price.input
    cost = (
        out.input_tokens * price.input
        + out.output_tokens * price.output
        + out.cache_read_tokens * cache_read
        + out.cache_write_tokens * cache_write
    ) / 1_000_000
    out.cost_usd = cost
    out.cost_source = "harness_counts"
    out.unpriced_calls = 0
    return out


@runtime_checkable
class BillingMeter(Protocol):
    """A billing meter a provider account exposes (``cost_source="metered"``). Interface only for now:
    assay ships no implementation, since no provider offers a per-run meter it can read offline."""

    name: str

    def spent_usd(self) -> float | None:
        """Dollars spent on the account so far, or None when the meter cannot be read."""
        ...


def metered_usage(total: Usage, before_usd: float | None, after_usd: float | None) -> Usage:
    """``total`` with its cost replaced by what a :class:`BillingMeter` moved between two readings."""
    out = total.model_copy()
    if before_usd is None or after_usd is None:
        return out
    out.cost_usd = max(0.0, after_usd - before_usd)
    out.cost_source = "metered"
    out.unpriced_calls = 0
    return out
