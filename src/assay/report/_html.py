"""A self-contained HTML report: the markdown rendered, images inlined, a pass-rate plot."""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path

from assay.runs._records import Scorecard

_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
th{background:#f3f3f3}code{background:#f3f3f3;padding:1px 4px}pre{background:#f6f6f6;padding:1em;overflow:auto}
img{max-width:100%}"""


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', text)


def _image(alt: str, src: str, base: Path) -> str:
    path = base / src
    if not src.startswith(("http:", "https:", "data:")) and path.is_file():
        mime = "image/svg+xml" if path.suffix == ".svg" else f"image/{path.suffix.lstrip('.') or 'png'}"
        src = f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode()}"
    return f'<img alt="{html.escape(alt)}" src="{html.escape(src)}">'


def markdown_to_html(md: str, base: Path) -> str:
    """Render the subset of markdown assay's reports use: headings, lists, tables, code, images."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>" + html.escape("\n".join(lines[i + 1 : j])) + "</pre>")
            i = j + 1
            continue
        if m := re.match(r"^(#{1,6})\s+(.*)", line):
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
            body = [r for r in cells[1:] if not all(re.fullmatch(r":?-+:?", c) for c in r)]
            out.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in cells[0]) + "</tr>")
            out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body]
            out.append("</table>")
            continue
        elif line.startswith(("- ", "* ")):
            items = []
            while i < len(lines) and lines[i].startswith(("- ", "* ")):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif m := re.match(r"^!\[([^\]]*)\]\(([^)]+)\)\s*$", line):
            out.append(_image(m.group(1), m.group(2), base))
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(out)


def pass_rate_plot(card: Scorecard) -> str | None:
    """A PNG (base64) of pass rate per category with Wilson intervals, or None when nothing passed/failed."""
    cats = {k: v for k, v in card.summary.by_category.items() if v.get("pass_rate") is not None}
    if not cats:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from assay.stats._intervals import wilson_interval

    names = list(cats)
    rates = [float(cats[n]["pass_rate"] or 0.0) for n in names]
    errs = []
    for n in names:
        m = int(cats[n]["measured"] or 0)
        lo, hi = wilson_interval(round(float(cats[n]["pass_rate"] or 0) * m), m)
        r = float(cats[n]["pass_rate"] or 0)
        errs.append((max(0.0, r - lo), max(0.0, hi - r)))
    fig, ax = plt.subplots(figsize=(max(4, 0.8 * len(names) + 2), 3))
    ax.bar(names, rates, yerr=list(zip(*errs, strict=True)), capsize=4, color="#4c72b0")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("pass rate")
    ax.set_title(f"{card.benchmark} · {card.suite}")
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def render_html(card: Scorecard, markdown: str, base: Path) -> str:
    body = markdown_to_html(markdown, base)
    plot = pass_rate_plot(card) if card.summary.measured else None
    if plot:
        body = body.replace(
            "<h2>Summary</h2>",
            f'<h2>Summary</h2><img alt="pass rate by category" src="data:image/png;base64,{plot}">',
            1,
        )
    title = html.escape(f"{card.benchmark} · {card.suite} · {card.run_id}")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )
