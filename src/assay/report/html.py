"""A self-contained HTML report: the markdown rendered, its images (plots) inlined as data URIs."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from assay.runs import Scorecard

REPORT_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
th{background:#f3f3f3}code{background:#f3f3f3;padding:1px 4px}pre{background:#f6f6f6;padding:1em;overflow:auto}
img{max-width:100%;display:block;margin:.5em 0}summary{cursor:pointer;margin:1em 0}"""


_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    # each pattern runs only where its marker is (a report of 10,000 cases has 60,000 cells, most plain)
    if "`" in text:
        text = _CODE.sub(r"<code>\1</code>", text)
    if "**" in text:
        text = _STRONG.sub(r"<strong>\1</strong>", text)
    return _LINK.sub(r'<a href="\2">\1</a>', text) if "](" in text else text


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
        elif m := re.match(r"^<details><summary>(.*)</summary>\s*$", line):
            out.append(f"<details><summary>{_inline(m.group(1))}</summary>")
        elif line.strip() == "</details>":
            out.append("</details>")
        elif m := re.match(r"^!\[([^\]]*)\]\(([^)]+)\)\s*$", line):
            out.append(_image(m.group(1), m.group(2), base))
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(out)


def render_html(card: Scorecard, markdown: str, base: Path) -> str:
    """``report.md`` as one HTML file; images the markdown links from ``base`` are inlined."""
    body = markdown_to_html(markdown, base)
    title = html.escape(f"{card.benchmark} · {card.suite} · {card.run_id}")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{REPORT_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )
