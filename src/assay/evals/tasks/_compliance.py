"""Web use read from an agent's tool record: the one rule of the realfix and swebench suites.

Web use is a network *action*, never a URL in text. A call uses the web when:

- its tool is a web tool by name (``WebFetch``, ``web_search``, ``fetch_url``, ``browse``; a ``search`` tool
  counts unless the record files it as a local kind: ``search_code`` searches the checkout);
- its shell command runs a network program (``curl``, ``wget``, ``ssh``, ...) on anything but a local file
  (``file://``);
- it runs ``git clone|fetch|pull|ls-remote|submodule update`` on a repository that is not a local path
  (a remote name such as ``origin`` is one: it names a URL);
- it installs from a package index (``pip``/``uv pip install|download``, ``npm|pnpm|yarn install|add``,
  ``poetry add|install``, ``apt-get install``, ``cargo install``, ``go get``); installing only local paths,
  or with ``--no-index``/``--offline``, is none;
- it runs an HTTP client in an inline snippet (``python -c``, ``python - <<EOF``, ``node -e``: ``urlopen``,
  ``requests.get``, ``httpx``, ``fetch(`` ...).

A ``sed`` that rewrites ``git://`` to ``https://``, a ``grep`` for a URL, a URL echoed into a file or passed
to a test is local work. Each finding names the call; the suite decides what a finding costs.
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
_PROGRAMS = {
    "curl", "wget", "http", "https", "httpie", "xh", "aria2c", "lynx", "links", "w3m", "ftp", "sftp", "scp",
    "ssh", "telnet", "nc", "ncat", "socat",
}  # fmt: skip
_GIT_NETWORK = {"clone", "fetch", "pull", "ls-remote"}
#: package managers and the verbs that fetch from an index
_INSTALLERS = {
    "pip": {"install", "download"},
    "npm": {"install", "i", "ci", "add", "update"},
    "pnpm": {"install", "i", "add", "update"},
    "yarn": {"install", "add", "upgrade"},
    "poetry": {"add", "install", "update"},
    "apt-get": {"install", "update", "download"},
    "apt": {"install", "update"},
    "cargo": {"install", "fetch"},
    "go": {"get", "install"},
    "gem": {"install"},
    "conda": {"install", "create"},
}
_OFFLINE_FLAGS = ("--no-index", "--offline", "--prefer-offline")
_LOCAL_URL = re.compile(r"^file://", re.IGNORECASE)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+:", re.IGNORECASE)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1([^\n]*)\n.*?(\n\2\s*$|\Z)", re.DOTALL | re.MULTILINE)
_SEPARATORS = re.compile(r"\|\||&&|[|;&\n()`]|\$\(")
_WRAPPERS = ("sudo", "env", "command", "exec", "time", "nohup", "timeout", "xargs")
#: an interpreter given code inline (``-c``, ``-e``, ``-`` with a here-document)
_INLINE = re.compile(
    r"(^|[\s;&|(/])(python[0-9.]*|node|deno|bun|ruby|perl|php)\b[^\n|;&]*?(\s-[ce]\b|\s-(\s|$)|<<)",
    re.MULTILINE,
)
_HTTP_CLIENT = re.compile(
    r"\burlopen\s*\(|\burllib\.request\b|\brequests\.(get|post|put|patch|head|delete|request|Session)\b|"
    r"\bhttpx\.(get|post|put|stream|request|Client|AsyncClient)\b|\bhttp\.client\.HTTPS?Connection\b|"
    r"\baiohttp\.ClientSession\b|\burllib3\.PoolManager\b|\bsocket\.create_connection\b|\bfetch\s*\(|"
    r"\bhttps?\.get\s*\(|\baxios\b|\bNet::HTTP\b|\bLWP::",
)


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


def _is_local(arg: str) -> bool:
    """A repository or package argument naming a file of this machine: a path or a ``file://`` URL."""
    if _LOCAL_URL.match(arg):
        return True
    if _URL.match(arg):
        return False
    return arg.startswith(("/", "./", "../", "~")) or arg in (".", "..") or arg.endswith((".whl", ".tar.gz"))


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program a segment runs (past ``sudo``, ``env``, ``VAR=x`` and the like) and its arguments."""
    wrapped = False
    while words and (
        words[0] in _WRAPPERS
        or re.fullmatch(r"\d+[smhd]?|[A-Za-z_]\w*=.*", words[0])
        or (wrapped and words[0].startswith("-"))
    ):  # sudo -u dev, env, timeout 60, VAR=x prefixes
        wrapped = wrapped or words[0] in _WRAPPERS
        words = words[2:] if wrapped and words[0] in ("-u", "-g", "-s", "-k") else words[1:]
    if not words:
        return "", []
    program, rest = words[0].rsplit("/", 1)[-1], words[1:]
    if program.startswith("python") and rest[:2] == ["-m", "pip"]:
        return "pip", rest[2:]
    if program == "uv" and rest[:1] == ["pip"]:
        return "pip", rest[1:]
    if program == "uv" and rest[:1] == ["add"]:
        return "pip", ["install", *rest[1:]]
    return {"pip3": "pip"}.get(program, program), rest


def _verb(args: list[str]) -> tuple[str, list[str]]:
    """The first word that is no option (git's ``-c x=y`` and ``-C dir`` skipped), and what follows it."""
    i = 0
    while i < len(args):
        if args[i] in ("-c", "-C"):
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return args[i], args[i + 1 :]
    return "", []


def _segment_reason(segment: str) -> str | None:
    program, args = _program(_words(segment))
    if not program:
        return None
    if program in _PROGRAMS:
        urls = [a for a in args if _URL.match(a)]
        if urls and all(_LOCAL_URL.match(u) for u in urls):  # only local files (file://)
            return None
        return f"runs {program}"
    if program == "git":
        verb, rest = _verb(args)
        operands = [a for a in rest if not a.startswith("-")]
        if verb == "submodule" and operands[:1] == ["update"]:
            return "runs git submodule update"
        if verb in _GIT_NETWORK and not (operands and _is_local(operands[0])):
            return f"runs git {verb}" + (f" {operands[0]}" if operands else "")
        return None
    verbs = _INSTALLERS.get(program)
    if verbs is not None:
        verb, rest = _verb(args)
        if verb not in verbs or any(f in args for f in _OFFLINE_FLAGS):
            return None
        packages = [a for a in rest if not a.startswith("-")]
        if packages and all(_is_local(p) for p in packages):
            return None
        return f"runs {program} {verb}" + (f" {' '.join(packages[:3])}" if packages else "")
    return None


def _command_reason(command: str) -> str | None:
    if _INLINE.search(command) and (client := _HTTP_CLIENT.search(command)):
        return f"runs an HTTP client in a snippet ({client.group(0).strip()})"
    for segment in _SEPARATORS.split(
        _HEREDOC.sub(lambda m: m.group(3) + "\n", command)
    ):  # a here-document's body is data
        reason = _segment_reason(segment)
        if reason is not None:
            return reason
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
