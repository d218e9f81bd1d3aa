"""The offline ``gh``: every harness gets the same GitHub CLI stand-in, served from a fixtures folder.

Standard library only: the shim runs this file with the system Python, inside the fence too.

Fixtures folder layout (every file optional except the items you serve)::

    repo.json            {"nameWithOwner": "acme/toybox", "description": ..., "defaultBranchRef": {"name": "main"}}
    issues/<N>.json      {"number": N, "title": ..., "state": "OPEN", "author": {"login": ...},
                          "labels": [{"name": ...}], "comments": [{"author": {"login": ...}, "body": ...}], ...}
    issues/<N>.md        the body as markdown (wins over "body" in the JSON)
    pulls/<N>.json       as for issues, plus "headRefName", "baseRefName", "additions", "deletions", ...
    pulls/<N>.md         the body
    pulls/<N>.diff       what ``gh pr diff N`` prints

Served: ``gh issue view N [--comments] [--json F,..]``, ``gh issue list [--state S] [--label L] [--limit N]
[--json F,..]``, the same for ``gh pr``, ``gh pr diff N``, ``gh repo view``, ``gh auth status``, ``gh --version``.
``-R/--repo`` is accepted and ignored (one fixtures folder is one repository). Writes (create, comment, close,
merge, edit, ``gh api`` with a method other than GET or with fields ...) are refused with exit 1, as is anything
else not served. Every call, served or not, is appended to the log (JSONL: argv, time, exit code, refused).

    stand_in = install_gh(toolchain_dir, fixtures, log)   # writes toolchain_dir/gh
    calls = read_gh_log(stand_in.log)
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERSION = "gh version 2.0.0-assay-offline (fixtures)"
_WRITES = {
    "issue": {"create", "comment", "close", "reopen", "edit", "delete", "transfer", "lock", "unlock", "pin",
              "unpin", "develop"},
    "pr": {"create", "comment", "close", "reopen", "edit", "merge", "review", "ready", "checkout", "lock",
           "unlock", "update-branch"},
}  # fmt: skip
_LIST_DEFAULT = 30


class GhExit(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _refuse(what: str) -> GhExit:
    return GhExit(
        1, f"gh (offline stand-in): '{what}' would change GitHub; writes are refused in this evaluation"
    )


def _item(fixtures: Path, kind: str, number: str) -> dict[str, Any]:
    if not number.lstrip("#").isdigit():
        raise GhExit(1, f"gh: invalid {kind} number {number!r}")
    n = int(number.lstrip("#"))
    folder = fixtures / ("issues" if kind == "issue" else "pulls")
    path = folder / f"{n}.json"
    if not path.is_file():
        noun = "issue" if kind == "issue" else "pull request"
        raise GhExit(1, f"GraphQL: Could not resolve to an {noun} with the number of {n}.")
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("number", n)
    body = folder / f"{n}.md"
    if body.is_file():
        data["body"] = body.read_text(encoding="utf-8")
    data.setdefault("state", "OPEN")
    data.setdefault("title", "")
    data.setdefault("body", "")
    return data


def _all(fixtures: Path, kind: str) -> list[dict[str, Any]]:
    folder = fixtures / ("issues" if kind == "issue" else "pulls")
    numbers = sorted((int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit()), reverse=True)
    return [_item(fixtures, kind, str(n)) for n in numbers]


def _login(item: dict[str, Any], key: str = "author") -> str:
    who = item.get(key) or {}
    return who.get("login", "") if isinstance(who, dict) else str(who)


def _names(values: Any, key: str = "name") -> str:
    return ", ".join(v.get(key, "") if isinstance(v, dict) else str(v) for v in values or [])


def _json_fields(item: dict[str, Any], fields: str) -> dict[str, Any]:
    wanted = [f.strip() for f in fields.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in item]
    if unknown:
        known = ", ".join(sorted(item))
        raise GhExit(1, f"Unknown JSON field: {unknown[0]!r} (this fixture has: {known})")
    return {f: item[f] for f in wanted}


def _view(item: dict[str, Any], kind: str, comments: bool) -> str:
    lines = [
        f"title:\t{item['title']}",
        f"state:\t{item['state']}",
        f"author:\t{_login(item)}",
        f"labels:\t{_names(item.get('labels'))}",
        f"assignees:\t{_names(item.get('assignees'), 'login')}",
        f"comments:\t{len(item.get('comments') or [])}",
        f"number:\t{item['number']}",
    ]
    if kind == "pr":
        lines += [f"url:\t{item.get('url', '')}", f"additions:\t{item.get('additions', 0)}",
                  f"deletions:\t{item.get('deletions', 0)}",
                  f"head:\t{item.get('headRefName', '')}", f"base:\t{item.get('baseRefName', '')}"]  # fmt: skip
    out = "\n".join(lines) + "\n--\n" + item["body"].rstrip("\n") + "\n"
    if comments:
        for c in item.get("comments") or []:
            out += f"--\nauthor:\t{_login(c)}\n--\n{str(c.get('body', '')).rstrip()}\n"
    return out


def _parse(args: list[str], flags: set[str], options: set[str]) -> tuple[list[str], dict[str, Any]]:
    positional: list[str] = []
    opts: dict[str, Any] = {}
    it = iter(args)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name in options:
            opts[name] = value if eq else next(it, None)
            if opts[name] is None:
                raise GhExit(1, f"gh: flag needs an argument: {name}")
        elif arg in flags:
            opts[arg] = True
        elif arg.startswith("-") and arg != "-":
            raise GhExit(1, f"gh (offline stand-in): unknown or unsupported flag {arg!r}")
        else:
            positional.append(arg)
    return positional, opts


def _issue_or_pr(fixtures: Path, kind: str, sub: str, args: list[str]) -> str:
    repo = {"-R", "--repo"}
    if sub == "view":
        pos, o = _parse(args, {"--comments", "-c", "--web", "-w"}, {"--json", *repo})
        if o.get("--web") or o.get("-w"):
            raise GhExit(1, "gh (offline stand-in): no browser here; use 'gh issue view N'")
        if len(pos) != 1:
            raise GhExit(1, f"gh {kind} view: give one number")
        item = _item(fixtures, kind, pos[0].rsplit("/", 1)[-1])
        if "--json" in o:
            return json.dumps(_json_fields(item, o["--json"]), indent=2) + "\n"
        return _view(item, kind, bool(o.get("--comments") or o.get("-c")))
    if sub == "list":
        opts = {"--state", "-s", "--label", "-l", "--limit", "-L", "--json", "--author", "-A", *repo}
        _, o = _parse(args, set(), opts)
        state = str(o.get("--state") or o.get("-s") or "open").upper()
        label = o.get("--label") or o.get("-l")
        author = o.get("--author") or o.get("-A")
        limit = str(o.get("--limit") or o.get("-L") or _LIST_DEFAULT)
        if not limit.isdigit():
            raise GhExit(1, f"gh: invalid --limit {limit!r}")
        items = [
            i
            for i in _all(fixtures, kind)
            if (
                state == "ALL"
                or i["state"].upper() == state
                or (state == "CLOSED" and i["state"] == "MERGED")
            )
            and (label is None or label in _names(i.get("labels")).split(", "))
            and (author is None or _login(i) == author)
        ][: int(limit)]
        if "--json" in o:
            return json.dumps([_json_fields(i, o["--json"]) for i in items], indent=2) + "\n"
        rows = []
        for i in items:
            extra = _names(i.get("labels")) if kind == "issue" else i.get("headRefName", "")
            rows.append(f"{i['number']}\t{i['title']}\t{extra}\t{i['state']}")
        return "".join(r + "\n" for r in rows)
    if kind == "pr" and sub == "diff":
        pos, _ = _parse(args, {"--patch", "--name-only"}, {"--color", *repo})
        if len(pos) != 1:
            raise GhExit(1, "gh pr diff: give one number")
        n = pos[0].lstrip("#")
        _item(fixtures, "pr", n)
        diff = fixtures / "pulls" / f"{int(n)}.diff"
        if not diff.is_file():
            raise GhExit(1, f"gh (offline stand-in): no diff in the fixtures for pull request {n}")
        return diff.read_text(encoding="utf-8")
    if sub in _WRITES[kind]:
        raise _refuse(f"gh {kind} {sub}")
    raise GhExit(
        1,
        f"gh (offline stand-in): 'gh {kind} {sub}' is not served (served: view, list{', diff' * (kind == 'pr')})",
    )


def _api(args: list[str]) -> str:
    method: str | None = None
    fields = False
    it = iter(args)
    for arg in it:
        if arg in ("-X", "--method"):
            method = str(next(it, "GET")).upper()
        elif arg.startswith("--method="):
            method = arg.split("=", 1)[1].upper()
        elif arg.startswith("-X"):
            method = arg[2:].upper()
        elif arg in ("-f", "-F", "--field", "--raw-field", "--input") or arg.startswith(
            ("--field=", "--raw-field=", "--input=")
        ):
            fields = True
    method = method or ("POST" if fields else "GET")  # gh's own default: fields make a POST
    if method != "GET":
        raise _refuse(f"gh api -X {method}")
    raise GhExit(1, "gh (offline stand-in): 'gh api' is not served; use gh issue/pr view|list")


def run(argv: list[str], fixtures: Path) -> str:
    """The output of ``gh argv`` over ``fixtures``; raises GhExit for an error or a refused write."""
    if not argv or argv[0] in ("help", "--help", "-h"):
        return (
            "offline gh stand-in: gh issue view|list, gh pr view|list|diff, gh repo view (writes refused)\n"
        )
    if argv[0] in ("--version", "version"):
        return VERSION + "\n"
    cmd, sub, rest = argv[0], (argv[1] if len(argv) > 1 else ""), argv[2:]
    if cmd in ("issue", "pr"):
        if not sub:
            raise GhExit(1, f"gh {cmd}: missing subcommand")
        return _issue_or_pr(fixtures, cmd, sub, rest)
    if cmd == "api":
        return _api(argv[1:])
    if cmd == "repo" and sub == "view":
        repo = fixtures / "repo.json"
        data = json.loads(repo.read_text(encoding="utf-8")) if repo.is_file() else {}
        return f"name:\t{data.get('nameWithOwner', '')}\ndescription:\t{data.get('description', '')}\n"
    if cmd == "auth" and sub == "status":
        return "offline gh stand-in: serving issues and pull requests from fixtures (no account)\n"
    if cmd in ("release", "label", "gist", "repo", "workflow", "run", "secret", "variable") and sub not in (
        "view",
        "list",
    ):
        raise _refuse(f"gh {cmd} {sub}")
    raise GhExit(1, f"gh (offline stand-in): 'gh {' '.join(argv[:2])}' is not served")


def main(argv: list[str] | None = None) -> int:
    """``[--fixtures DIR] [--log FILE] [--] GH ARGS...`` (what the shim runs); without the options, the
    ``ASSAY_GH_FIXTURES`` and ``ASSAY_GH_LOG`` variables (``python -m assay.agents._gh issue view 12``)."""
    gh_args = list(sys.argv[1:] if argv is None else argv)
    opts: dict[str, str] = {}
    while gh_args[:1] in (["--fixtures"], ["--log"]) and len(gh_args) >= 2:
        opts[gh_args[0]], gh_args = gh_args[1], gh_args[2:]
    if gh_args[:1] == ["--"]:
        gh_args = gh_args[1:]
    fixtures = Path(opts.get("--fixtures") or os.environ.get("ASSAY_GH_FIXTURES", ""))
    log = opts.get("--log") or os.environ.get("ASSAY_GH_LOG")
    started = time.time()
    refused = False
    try:
        if not fixtures.is_dir():
            raise GhExit(1, f"gh (offline stand-in): fixtures folder {fixtures} is missing")
        sys.stdout.write(run(gh_args, fixtures))
        code = 0
    except GhExit as exc:
        refused = "writes are refused" in exc.message
        print(exc.message, file=sys.stderr)
        code = exc.code
    except (OSError, ValueError) as exc:  # a broken fixture file
        print(f"gh (offline stand-in): bad fixtures: {exc}", file=sys.stderr)
        code = 1
    if log:
        entry = {"argv": ["gh", *gh_args], "time": started, "exit_code": code, "refused": refused,
                 "cwd": os.getcwd()}  # fmt: skip
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
    return code


@dataclass(frozen=True)
class GhStandIn:
    """An installed shim: put ``bin_dir`` first on PATH; fence binds ``binds_ro`` and ``binds_rw``."""

    bin_dir: Path
    fixtures: Path
    log: Path

    @property
    def binds_ro(self) -> list[Path]:
        return [self.bin_dir, self.fixtures]

    @property
    def binds_rw(self) -> list[Path]:
        return [self.log]


@dataclass(frozen=True)
class GhCall:
    argv: list[str]
    time: float
    exit_code: int
    refused: bool


def install_gh(bin_dir: Path, fixtures: Path, log: Path) -> GhStandIn:
    """Write ``bin_dir/gh`` (a shell shim running a copy of this file with this machine's Python)."""
    if not Path(fixtures).is_dir():
        from assay.errors import ConfigError

        raise ConfigError(f"gh fixtures {fixtures}: not a folder")
    bin_dir, fixtures, log = Path(bin_dir).resolve(), Path(fixtures).resolve(), Path(log).resolve()
    bin_dir.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch()
    script = bin_dir / ".assay-gh.py"
    script.write_text(Path(__file__).read_text(encoding="utf-8"), encoding="utf-8")
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    q = shlex.quote
    shim = bin_dir / "gh"
    shim.write_text(
        f'#!/bin/sh\nexec {q(python)} -I -S {q(str(script))} --fixtures {q(str(fixtures))} --log {q(str(log))} -- "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    return GhStandIn(bin_dir, fixtures, log)


def read_gh_log(log: Path) -> list[GhCall]:
    """Every call the stand-in logged, in order (a torn last line is skipped)."""
    calls = []
    if not Path(log).is_file():
        return calls
    for line in Path(log).read_text(encoding="utf-8").splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        calls.append(GhCall(list(d["argv"]), float(d["time"]), int(d["exit_code"]), bool(d["refused"])))
    return calls


if __name__ == "__main__":
    sys.exit(main())
