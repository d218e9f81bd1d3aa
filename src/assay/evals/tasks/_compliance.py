"""Web use read from an agent's tool record: the one rule of the realfix and swebench suites.

A call is web use when its tool is a web tool by name (``WebFetch``, ``web_search``, ``fetch_url``,
``browse``; a ``search`` tool counts unless the record files it as a local kind: ``search_code`` searches the
checkout) or when its shell command reaches out: a download program (``curl``, ``wget``, ...) as a command
word, an ``http(s)://`` URL, ``git clone|fetch|pull|ls-remote``, or ``pip install|download``. Each is one
finding naming the call; the suite decides what a finding costs.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from pydantic import BaseModel

from assay.agents import ToolCallRecord

__all__ = ["WebUse", "web_use"]

_WEB_TOOL = re.compile(r"web|fetch|brows|http|url|internet|download", re.IGNORECASE)
#: record kinds whose ``search`` tools look in the checkout, documents or memory, not on the web
_LOCAL_KINDS = {"read", "list", "search", "edit", "write", "documents", "memory"}
_PROGRAMS = {"curl", "wget", "http", "https", "httpie", "xh", "aria2c", "lynx", "links", "w3m", "ftp", "nc"}
_URL = re.compile(r"\b(?:https?|ftp)://", re.IGNORECASE)
_NETWORK_SUBCOMMANDS = {"git": {"clone", "fetch", "pull", "ls-remote"}, "pip": {"install", "download"}}
_SEPARATORS = re.compile(r"\|\||&&|[|;&\n()`]|\$\(")


class WebUse(BaseModel):
    """One call of the record that used the web, and why it counts."""

    call: int
    tool: str
    why: str


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def _command_reason(command: str) -> str | None:
    if _URL.search(command):
        return "names a URL"
    for segment in _SEPARATORS.split(command):
        words = [w for w in _words(segment) if "=" not in w or w.startswith("-")]  # VAR=x prefixes
        while words and words[0] in ("sudo", "env", "command", "exec", "time", "nohup"):
            words = words[1:]
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program in ("python", "python3") and words[1:3] == ["-m", "pip"]:
            program, words = "pip", words[2:]
        if program in ("pip3",):
            program = "pip"
        if program in _PROGRAMS:
            return f"runs {program}"
        sub = _NETWORK_SUBCOMMANDS.get(program)
        if sub is not None:
            verb = next((w for w in words[1:] if not w.startswith("-")), "")
            if verb in sub:
                return f"runs {program} {verb}"
    return None


def web_use(calls: Sequence[ToolCallRecord]) -> list[WebUse]:
    """Every call of ``calls`` that used the web, in order (empty: none did)."""
    found: list[WebUse] = []
    for i, call in enumerate(calls):
        why: str | None = None
        name = call.name
        if _WEB_TOOL.search(name) or ("search" in name.lower() and call.kind not in _LOCAL_KINDS):
            why = f"web tool {name}"
        elif call.command is not None:
            reason = _command_reason(call.command)
            why = f"shell command {reason}: {call.command[:160]}" if reason else None
        if why is not None:
            found.append(WebUse(call=i, tool=name, why=why))
    return found
