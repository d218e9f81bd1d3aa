"""Reading an issue for a draft: its title, reproduction steps, expected and actual behaviour.

An issue is JSON as ``gh issue view N --json title,body,comments,url,number,labels`` writes it, or markdown
(a ``# title`` line, then the body). Sections are found by their headings (``## Steps to reproduce``,
``**Expected behavior**``, ``Actual:`` ...); the steps are the section's list items (a step's indented lines
and code blocks stay with it), or its whole text when it has no list. A body without a steps section is
looked for in the comments; an issue with none anywhere is a ConfigError.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

__all__ = ["Issue", "parse_sections", "read_issue"]

#: a heading: ``## Steps``, a line that is all bold (``**Expected**``), or a known name ending in a colon
_HEADING = re.compile(
    r"^(?:#{1,6}\s+(?P<h>.+?)\s*#*|\*\*(?P<b>[^*]+?):?\*\*:?|(?P<c>(?:steps|expected|actual|observed)[^:]{0,40}):)\s*$",
    re.IGNORECASE,
)
_ITEM = re.compile(r"^(?P<indent>\s{0,3})(?:\d+[.)]|[-*+])\s+(?P<text>.*)$")
_KINDS = (
    ("steps", re.compile(r"reproduc|steps|how to trigger", re.IGNORECASE)),
    ("expected", re.compile(r"expect|should", re.IGNORECASE)),
    ("actual", re.compile(r"actual|observed|what happen|current behaviou?r|instead", re.IGNORECASE)),
)


@dataclass
class Issue:
    title: str
    steps: list[str]
    expected: str | None = None
    actual: str | None = None
    number: int | None = None
    url: str | None = None
    labels: list[str] = field(default_factory=list)


def parse_sections(body: str) -> dict[str, str]:
    """The body's ``steps``, ``expected`` and ``actual`` sections (first of each), by heading."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    fence = False
    for line in body.replace("\r\n", "\n").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        heading = None if fence else _HEADING.match(line.strip())
        if heading:
            name = heading.group("h") or heading.group("b") or heading.group("c") or ""
            current = next((kind for kind, rx in _KINDS if rx.search(name)), None)
            if current in found:
                current = None  # a second section of a kind: the first one counts
            elif current is not None:
                found[current] = []
            continue
        if current is not None:
            found[current].append(line)
    return {k: "\n".join(v).strip() for k, v in found.items() if "\n".join(v).strip()}


def _steps(section: str) -> list[str]:
    """The list items of a steps section (continuation lines kept with their item, dedented), else the text."""
    items: list[list[str]] = []
    fence = False
    for line in section.splitlines():
        match = None if fence else _ITEM.match(line)
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if match:
            items.append([match.group("text")])
        elif items:
            items[-1].append(line)
    steps = []
    for first, *rest in items:
        text = (first + "\n" + textwrap.dedent("\n".join(rest))).strip()
        if text:
            steps.append(text)
    return steps or [section.strip()]


def _load_json(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"malformed JSON ({exc.msg})", path=str(path), line=exc.lineno) from exc
    if not isinstance(data, dict) or not isinstance(data.get("title"), str) or "body" not in data:
        raise ConfigError(
            "an issue JSON is an object with title and body (gh issue view N --json "
            "title,body,comments,url,number,labels)",
            path=str(path),
            line=1,
        )
    return data


def read_issue(path: Path) -> Issue:
    """Read a GitHub issue (``gh`` JSON or markdown) into its steps and expected behaviour."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"--from-issue: cannot read the issue: {exc.strerror or exc}", path=str(path)
        ) from exc
    if path.suffix == ".json" or text.lstrip().startswith("{"):
        data = _load_json(path, text)
        title, body = data["title"].strip(), str(data.get("body") or "")
        comments = [str(c.get("body") or "") for c in data.get("comments") or [] if isinstance(c, dict)]
        labels = [str(x.get("name", x) if isinstance(x, dict) else x) for x in data.get("labels") or []]
        number = data.get("number") if isinstance(data.get("number"), int) else None
        url = data.get("url") if isinstance(data.get("url"), str) else None
    else:
        lines = text.strip().splitlines()
        if not lines:
            raise ConfigError("--from-issue: the issue is empty", path=str(path))
        title = re.sub(r"^#\s+", "", lines[0]).strip()
        body, comments, labels, number, url = "\n".join(lines[1:]), [], [], None, None
    sections = parse_sections(body)
    for comment in comments:
        for kind, value in parse_sections(comment).items():
            sections.setdefault(kind, value)
    if "steps" not in sections:
        raise ConfigError(
            "the issue has no reproduction steps: a section headed 'Steps to reproduce' (in the body or a "
            "comment) is what becomes the scenario's turns",
            path=str(path),
        )
    return Issue(
        title=title or path.stem,
        steps=_steps(sections["steps"]),
        expected=sections.get("expected"),
        actual=sections.get("actual"),
        number=number,
        url=url,
        labels=labels,
    )
