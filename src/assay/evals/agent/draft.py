"""``assay eval agent draft``: a scenario drafted from a real session or issue, for a person to finish.

The draft goes to ``eval/scenarios/drafts/<category>/<id>.yaml`` (no tier runs drafts), scrubbed by
:class:`~assay._util._scrub.Anonymizer` (paths, e-mails, tokens and keys, host names become fixture values),
with ``draft: true`` and ``source`` filled in. What only a person can say is left as a ``TODO`` marker
(:data:`TODO`): the difficulty rationale always, and a session turn's success criteria; ``promote`` refuses
a draft with one left. The file is loaded back with :func:`load_scenario` before the command succeeds.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.errors import ConfigError
from assay.evals.agent._draft_issue import read_issue
from assay.evals.agent._scenario import CATEGORIES, Scenario
from assay.evals.agent.draft_session import Session, read_session
from assay.evals.agent.scenario_load import DRAFTS_DIR, ScenarioWarning, default_scenarios_dir, load_scenario

__all__ = ["TODO", "UNCATEGORIZED", "Draft", "draft_from_issue", "draft_from_session", "write_draft"]

#: the marker of what a person must still write (``promote`` refuses a draft that has one)
TODO = "TODO"
#: the folder of a draft whose category is not known yet (``promote --category`` gives it one)
UNCATEGORIZED = "uncategorized"
#: tool kinds that say nothing about the task (a to-do list, a sub-agent): never expected-tool candidates
_NO_CANDIDATE = {"other"}
_ANSWER_HINT = 300


@dataclass
class Draft:
    """What a draft says before it is scrubbed and written."""

    id: str
    category: str
    source_kind: str
    link: str
    persona: str
    turns: list[dict[str, Any]]
    expected_tools: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    #: places to scrub besides the patterns (the session's workdirs)
    workdirs: list[str] = field(default_factory=list)
    header: str = ""


def slug(text: str, limit: int = 40) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for w in words:
        if len(out) + len(w) + 1 > limit:
            break
        out = f"{out}-{w}" if out else w
    return out or "untitled"


def _id_words(text: str, workdirs: Sequence[str]) -> str:
    """The words of ``text`` an id may be made of: scrubbed, without paths, addresses or redactions."""
    from assay._util import MARKER, Anonymizer

    clean = Anonymizer(workdirs=workdirs).scrub_text(text).replace(MARKER, " ")
    return " ".join(w for w in clean.split() if not any(ch in w for ch in "/@\\"))


def _hint(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _ANSWER_HINT else flat[: _ANSWER_HINT - 3] + "..."


def _candidates(session: Session) -> list[str]:
    kinds = [c.kind for c in session.tool_record if c.kind not in _NO_CANDIDATE]
    return [f"kind:{k}" for k in dict.fromkeys(kinds)]


def _read_paths(session: Session) -> dict[str, str]:
    """Files the agent read or changed inside its workdir: the scenario's setup must provide them."""
    paths: dict[str, None] = {}
    for call in session.tool_record:
        for p in [*call.edited_paths, *(str(call.arguments.get(k, "")) for k in ("file_path", "path"))]:
            rel = p
            for wd in session.workdirs:
                rel = rel.removeprefix(wd.rstrip("/") + "/")
            if rel and not rel.startswith(("/", "~", "..")) and call.kind in ("read", "edit", "write"):
                paths.setdefault(rel, None)
    return {p: f"{TODO}: the content of {p} as the session saw it" for p in paths}


def draft_from_session(
    path: Path,
    *,
    category: str | None = None,
    draft_id: str | None = None,
    fmt: str = "auto",
    case: str | None = None,
) -> Draft:
    """A draft from a session: its user turns become turns, its tool calls ``expected_tools`` candidates."""
    session = read_session(path, fmt=fmt, case=case)
    turns = []
    for t in session.turns:
        first = " ".join(t.user.split())
        objective = t.objective or f"Get the agent to do what the user asked: {_hint(first)}"
        said = f" (the session's agent answered: {_hint(t.answer)!r})" if t.answer else ""
        turns.append(
            {
                "objective": objective,
                "user_message": t.user,
                "success_criteria": f"{TODO}: what a correct answer to this turn does and contains{said}",
            }
        )
    where = f"{session.format}:{Path(path).name}"
    anchor = session.session_id or session.case_id
    return Draft(
        id=draft_id or f"session-{slug(_id_words(session.turns[0].user, session.workdirs))}",
        category=category or UNCATEGORIZED,
        source_kind="session",
        link=f"{where}#{anchor}" if anchor else where,
        persona=f"A user of a coding agent, as in a real {session.format} session ({len(turns)} turn(s)).",
        turns=turns,
        expected_tools=_candidates(session),
        files=_read_paths(session),
        workdirs=session.workdirs,
        header=f"Drafted from a {session.format} session ({Path(path).name}).",
    )


def _label_category(labels: Sequence[str]) -> str | None:
    for label in labels:
        name = re.sub(r"[\s\-]+", "_", label.strip().lower())
        if name in CATEGORIES:
            return name
    return None


#: a step that quotes what to say (``Ask: "..."``): the quote is the user's message
_QUOTED = re.compile(
    r'^(?:then\s+)?(?:ask|say|type|send|tell it|follow[ -]?up|reply)\b[^"\n\u201c]{0,30}?:?\s*["\u201c](?P<text>[^"\u201d]+)["\u201d]\.?$',
    re.IGNORECASE,
)


def draft_from_issue(path: Path, *, category: str | None = None, draft_id: str | None = None) -> Draft:
    """A draft from an issue: the reproduction steps become turns, the expected section the success criteria."""
    issue = read_issue(path)
    expected = issue.expected
    if expected is not None and issue.actual:
        expected = f"{expected}\n(The issue reports instead: {_hint(issue.actual)})"
    turns = []
    for i, step in enumerate(issue.steps):
        last = i == len(issue.steps) - 1
        if last:
            criteria = expected or f"{TODO}: the issue has no 'expected' section: what a correct outcome is"
        else:
            criteria = (
                "The agent carries out this step and says what it saw, without claiming more than it did."
            )
        said = _QUOTED.match(step)
        message = said.group("text") if said else step
        turns.append({"objective": _hint(step), "user_message": message, "success_criteria": criteria})
    number = f"{issue.number}-" if issue.number is not None else ""
    return Draft(
        id=draft_id or f"issue-{number}{slug(_id_words(issue.title, ()), 32)}",
        category=category or _label_category(issue.labels) or UNCATEGORIZED,
        source_kind="issue",
        link=issue.url or f"issue:{Path(path).name}",
        persona=f"A user who filed the issue {issue.title!r} and takes the agent through its reproduction.",
        turns=turns,
        tags=[slug(x) for x in issue.labels],
        header=f"Drafted from an issue ({Path(path).name}): {issue.title}",
    )


def _dump(key: str, value: Any) -> str:
    return yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, width=110)


#: stands for the source link while the rest is anonymized: the link is where the scenario came from (an
#: issue's public address), so it keeps its host; secrets are still scrubbed out of it
_LINK = "assay-draft-source-link"


def render(draft: Draft) -> str:
    """The draft as YAML, with comments saying what a person must still do."""
    parts = [
        f"# {draft.header}\n",
        "# Written by `assay eval agent draft`, scrubbed (paths, e-mails, tokens, hosts -> fixture values).\n",
        f"# Finish it: replace every {TODO}, prune expected_tools, then `assay eval agent promote`.\n",
        _dump("id", draft.id),
        _dump("category", draft.category),
        _dump("draft", True),
        _dump("source", {"kind": draft.source_kind, "link": _LINK}),
        _dump("persona", draft.persona),
        f"# {TODO}: why this scenario is hard, and for which models (promote refuses it without one)\n",
        _dump("difficulty_rationale", f"{TODO}: why this is hard"),
    ]
    if draft.expected_tools:
        parts.append(
            "# candidates: the kinds of tool the session's agent called; keep those a correct run needs\n"
        )
        parts.append(_dump("expected_tools", draft.expected_tools))
    if draft.tags:
        parts.append(_dump("tags", draft.tags))
    if draft.files:
        parts.append("# files the session's agent read or changed: the setup must provide them\n")
        parts.append(_dump("setup", {"files": draft.files}))
    parts.append(_dump("turns", draft.turns))
    return "".join(parts)


def _drafts_dir(out_dir: Path | None) -> Path:
    return Path(out_dir) if out_dir is not None else default_scenarios_dir() / DRAFTS_DIR


def _taken(out_dir: Path, draft_id: str, target: Path) -> Path | None:
    """A scenario file elsewhere under the same scenarios folder with this id (ids are file names)."""
    root = out_dir.parent if out_dir.name == DRAFTS_DIR else out_dir
    for found in [*root.glob(f"*/{draft_id}.yaml"), *root.glob(f"{DRAFTS_DIR}/*/{draft_id}.yaml")]:
        if found.resolve() != target.resolve():
            return found
    return None


def write_draft(draft: Draft, *, out_dir: Path | None = None, force: bool = False) -> tuple[Path, Scenario]:
    """Scrub and write ``draft`` to ``<out_dir>/<category>/<id>.yaml``; load it back as a draft."""
    from assay._util import Anonymizer, Scrubber

    if not re.fullmatch(r"[a-z0-9][a-z0-9._\-]*", draft.id):
        raise ConfigError(f"--id {draft.id!r}: lower-case letters, digits, '-', '_' and '.' only")
    if not re.fullmatch(r"[a-z0-9_]+", draft.category):
        raise ConfigError(f"--category {draft.category!r}: a folder name (lower-case letters, digits, '_')")
    directory = _drafts_dir(out_dir)
    target = directory / draft.category / f"{draft.id}.yaml"
    if target.exists() and not force:
        raise ConfigError(
            "a draft is already there (--force replaces it, or give another --id)", path=str(target)
        )
    other = _taken(directory, draft.id, target)
    if other is not None:
        raise ConfigError(f"--id {draft.id}: already the id of {other}")
    scrubber = Anonymizer(workdirs=draft.workdirs)
    link = json.dumps(Scrubber().scrub_text(draft.link))  # a JSON string is a YAML scalar
    text = scrubber.clean(render(draft), str(target)).replace(_LINK, link)
    scrubber.check(text, str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ScenarioWarning)  # an uncategorized draft is expected
            scenario = load_scenario(tmp.rename(target), root=directory.parent)
    except ConfigError:
        target.unlink(missing_ok=True)
        raise
    finally:
        tmp.unlink(missing_ok=True)
    if not scenario.draft:
        raise ConfigError("the draft did not load as a draft (it is not under drafts/)", path=str(target))
    return target, scenario
