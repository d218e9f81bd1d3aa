"""The baseline code search is held against: ``git grep`` for the code-looking identifiers in an issue.

Identifiers are snake_case, camelCase/CamelCase, dotted names and anything in backticks; each is
weighted by its rarity across the indexed files (log N/df), and files (or symbols) are ranked by the
summed weight of the identifiers they contain, ties broken by path.
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

__all__ = ["grep_rank_files", "grep_rank_symbols", "query_identifiers"]

_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]")


def _code_like(token: str) -> bool:
    return "_" in token.strip("_") or "." in token or bool(_CAMEL.search(token))


def query_identifiers(text: str) -> list[str]:
    """Code-looking identifiers in ``text`` (dotted names also give their parts), in order of appearance."""
    found: list[str] = []

    def add(token: str) -> None:
        token = token.strip("._")
        if len(token) >= 3 and token not in found:
            found.append(token)

    for inner in _BACKTICK.findall(text):
        for tok in _IDENT.findall(inner):
            add(tok)
            for part in tok.split("."):
                add(part)
    for tok in _IDENT.findall(_BACKTICK.sub(" ", text)):
        if tok.endswith(".") or (
            re.fullmatch(r"[a-z]+\.[a-z]{2,4}", tok) and tok.split(".")[1] in {"com", "org"}
        ):
            continue
        if _code_like(tok):
            add(tok)
            if "." in tok:
                for part in tok.split("."):
                    if _code_like(part) or len(part) > 3:
                        add(part)
    return found


def _grep_files(worktree: Path, ident: str) -> set[str]:
    proc = subprocess.run(
        ["git", "grep", "-l", "-F", "-w", "-I", "-e", ident],
        cwd=str(worktree),
        capture_output=True,
        text=True,
        errors="replace",
    )
    return set(proc.stdout.splitlines()) if proc.returncode in (0, 1) else set()


def grep_rank_files(worktree: Path, query: str, indexed: Iterable[str]) -> tuple[list[str], dict[str, float]]:
    """Files ranked by the rarity-weighted identifiers of ``query`` they contain; also the weights used."""
    files = set(indexed)
    n = max(len(files), 1)
    scores: dict[str, float] = {}
    weights: dict[str, float] = {}
    for ident in query_identifiers(query):
        hits = _grep_files(worktree, ident) & files
        if not hits:
            continue
        w = math.log(1.0 + n / len(hits))
        weights[ident] = w
        for f in hits:
            scores[f] = scores.get(f, 0.0) + w
    return sorted(scores, key=lambda f: (-scores[f], f)), weights


def grep_rank_symbols(
    chunks: Iterable[tuple[str, str, str]], weights: dict[str, float]
) -> list[tuple[str, str]]:
    """(path, symbol) ranked by the weighted identifiers their chunk text contains (best chunk counts)."""
    patterns = {
        ident: re.compile(r"(?<![A-Za-z0-9_])" + re.escape(ident) + r"(?![A-Za-z0-9_])") for ident in weights
    }
    best: dict[tuple[str, str], float] = {}
    for path, symbol, text in chunks:
        if not symbol:
            continue
        s = sum(w for ident, w in weights.items() if patterns[ident].search(text))
        if s > 0 and s > best.get((path, symbol), 0.0):
            best[(path, symbol)] = s
    return sorted(best, key=lambda k: (-best[k], k))
