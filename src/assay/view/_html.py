"""The page frame and small HTML helpers shared by every page.

Every link is relative to the page (``root`` climbs back to the site's top), so the same pages work served
and as a static bundle opened from ``file://``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from urllib.parse import quote

from assay.report.markdown import pass_hat_k_text as pass_hat_k_text  # the report's pass^k line
from assay.report.markdown import pct as pct  # the one percent format, shared with the report
from assay.runs import MetricValue

#: status -> css class
_STATUS_CLASS = {"PASS": "pass", "FAIL": "fail", "ERROR": "error", "INFRA_ERROR": "infra", "TIMEOUT": "error"}


def e(x: object) -> str:
    return escape("" if x is None else str(x))


def href(*parts: str) -> str:
    return "/".join(quote(p, safe="~.-_") for p in parts)


def num(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def status_badge(status: str) -> str:
    return f'<span class="badge {_STATUS_CLASS.get(status, "other")}">{e(status)}</span>'


def interval(mv: MetricValue) -> str:
    if mv.low is None or mv.high is None:
        return "—"
    return f"[{num(mv.low)}, {num(mv.high)}]"


def table(
    head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "", row_attrs: Sequence[str] = ()
) -> str:
    """A table of already-escaped cells; ``row_attrs`` are extra attributes of each ``<tr>``."""
    out = [
        f'<table class="{cls}"><thead><tr>'
        + "".join(f"<th>{e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for i, row in enumerate(rows):
        attrs = f" {row_attrs[i]}" if i < len(row_attrs) else ""
        out.append(f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def page(title: str, body: str, root: str, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page: ``crumbs`` are (label, link relative to the site top) pairs."""
    nav = " › ".join(f'<a href="{root}{h}">{e(label)}</a>' if h else e(label) for label, h in crumbs)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · assay view</title>"
        f'<link rel="stylesheet" href="{root}static/view.css"></head><body>'
        f'<header><a class="brand" href="{root}index.html">assay view</a>'
        f'<a href="{root}index.html">runs</a><a href="{root}compare.html">compare</a>'
        f'<a href="{root}trends.html">trends</a></header>'
        f'<nav class="crumbs">{nav}</nav><main><h1>{e(title)}</h1>{body}</main>'
        f'<script src="{root}static/view.js"></script></body></html>'
    )


def pre(text: object) -> str:
    return f"<pre>{e(text)}</pre>"


def details(summary: str, inner: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{inner}</details>"
