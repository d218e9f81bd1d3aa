"""Plots as inline SVG, drawn on the server: they need no script, no network, and work in a bundle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 290, 56, 16, 16, 76
COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")


@dataclass(frozen=True)
class Point:
    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    title: str = ""


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def _frame(lo: float, hi: float, title: str, unit: str) -> tuple[list[str], float, float]:
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    parts = [
        f'<svg class="plot" role="img" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
        f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" stroke="#888"/>',
        f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{H - PAD_B}" stroke="#888"/>',
    ]
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        y = _y(v, lo, hi)
        parts.append(
            f'<text x="{PAD_L - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{_fmt(v)}</text>'
        )
        parts.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="#eee"/>')
    if unit:
        parts.append(f'<text x="4" y="{PAD_T + 4}" font-size="11">{escape(unit)}</text>')
    return parts, lo, hi


def _y(v: float, lo: float, hi: float) -> float:
    return PAD_T + (H - PAD_T - PAD_B) * (1 - (v - lo) / (hi - lo))


def line_chart(
    points: Sequence[Point], title: str, unit: str = "", target: float | None = None, zero_one: bool = False
) -> str:
    """Values in order with their intervals as error bars, and an optional target line."""
    vals = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
    if target is not None:
        vals.append(target)
    if not vals:
        return '<p class="muted">nothing measured to plot</p>'
    lo, hi = (0.0, 1.0) if zero_one else (min(vals), max(vals))
    parts, lo, hi = _frame(lo, hi, title, unit)
    n = len(points)
    step = (W - PAD_L - PAD_R) / max(n, 1)
    xy = []
    for i, p in enumerate(points):
        x = PAD_L + step * (i + 0.5)
        if n <= 12 or i % max(1, n // 12) == 0:
            parts.append(
                f'<text x="{x:.1f}" y="{H - PAD_B + 14}" font-size="10" text-anchor="end" '
                f'transform="rotate(-30 {x:.1f} {H - PAD_B + 14})">{escape(p.label[:18])}</text>'
            )
        if p.value is None:
            continue
        y = _y(p.value, lo, hi)
        if p.low is not None and p.high is not None:
            parts.append(
                f'<line class="interval" x1="{x:.1f}" y1="{_y(p.low, lo, hi):.1f}" x2="{x:.1f}" '
                f'y2="{_y(p.high, lo, hi):.1f}" stroke="{COLORS[0]}" stroke-opacity="0.4" stroke-width="6"/>'
            )
        xy.append(f"{x:.1f},{y:.1f}")
        tip = escape(f"{p.title or p.label}: {_fmt(p.value)}")
        parts.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{COLORS[0]}"><title>{tip}</title></circle>'
        )
    if len(xy) > 1:
        parts.append(f'<polyline points="{" ".join(xy)}" fill="none" stroke="{COLORS[0]}"/>')
    if target is not None:
        y = _y(target, lo, hi)
        parts.append(
            f'<line class="target" x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" '
            f'stroke="{COLORS[1]}" stroke-dasharray="6 4"/>'
            f'<text x="{W - PAD_R}" y="{y - 4:.1f}" text-anchor="end" font-size="11" fill="{COLORS[1]}">'
            f"target {_fmt(target)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def cdf_chart(series: dict[str, Sequence[float]], title: str, unit: str) -> str:
    """Empirical CDFs, one line per series (latency distributions)."""
    data = {k: sorted(v) for k, v in series.items() if v}
    if not data:
        return '<p class="muted">no samples to plot</p>'
    xmax = max(v[-1] for v in data.values())
    xmin = min(v[0] for v in data.values())
    if xmax - xmin < 1e-12:
        xmax = xmin + 1.0
    parts, _, _ = _frame(0.0, 1.0, title, "fraction")
    for i in range(5):
        v = xmin + (xmax - xmin) * i / 4
        x = PAD_L + (W - PAD_L - PAD_R) * i / 4
        parts.append(
            f'<text x="{x:.1f}" y="{H - PAD_B + 14}" font-size="11" text-anchor="middle">{_fmt(v)}</text>'
        )
    parts.append(f'<text x="{W - PAD_R}" y="{H - 6}" font-size="11" text-anchor="end">{escape(unit)}</text>')
    for j, (name, values) in enumerate(data.items()):
        color = COLORS[j % len(COLORS)]
        pts = []
        for k, v in enumerate(values):
            x = PAD_L + (W - PAD_L - PAD_R) * (v - xmin) / (xmax - xmin)
            pts.append(f"{x:.1f},{_y((k + 1) / len(values), 0, 1):.1f}")
        parts.append(f'<polyline class="cdf" points="{" ".join(pts)}" fill="none" stroke="{color}"/>')
        parts.append(
            f'<text x="{PAD_L + 8}" y="{PAD_T + 14 * (j + 1)}" font-size="11" fill="{color}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
