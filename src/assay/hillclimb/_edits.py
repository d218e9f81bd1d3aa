"""One edit of the profile: taken from the fixer's copy, checked in code, applied to the tree.

The fixer works on a copy of the profile folder, so it cannot reach any other file; what it changed there is
the edit. Hidden files (a name starting with ``.``, which the fixer's own process may leave, its HOME being the
copy) and ``__pycache__`` are not part of it. An edit is rejected when:

- the tree changed anywhere outside the profile while the fixer ran (a command fixer can write anywhere);
- a line it adds names a scenario id, a fixture path or document name, a planted canary or secret, or quotes
  a ground-truth phrase (matched as the ``fact`` check matches: :func:`assay.evals.agent.checks.has_fact`) or
  a ground-truth number (within its tolerance: :func:`~assay.evals.agent.checks.number_matches`), and the
  profile did not hold it before the edit (a file rewritten whole re-adds what it had). Only distinctive
  strings count, so a general instruction is not refused for a common word: a phrase of two or more words,
  or one word that is capitalised or holds a digit or sign (``Porto``, ``4.2.1``, not ``timeout``); a number
  with a decimal part or of 100 or more; a path with a folder, or a name with ``_``, ``-`` or a digit
  (``notes/2026-11-20-planning.md``, ``docqa_price_table.md``, not ``README.md``);
- the edited profile no longer loads (an unknown tool file, an empty description, no system prompt).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError
from assay.hillclimb._target import Forbidden

__all__ = [
    "Edit",
    "added_lines",
    "apply_edit",
    "copy_profile",
    "find_leaks",
    "profile_error",
    "profile_text",
    "take_edit",
]


def _skipped(rel: Path) -> bool:
    return any(p.startswith(".") or p == "__pycache__" for p in rel.parts)


def _files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not path.is_symlink() and not _skipped(rel):
            out[rel.as_posix()] = path.read_bytes()
    return out


@dataclass
class Edit:
    """Files of the profile the fixer wrote (relative path -> new bytes) and removed."""

    written: dict[str, bytes] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.written and not self.removed

    def paths(self) -> list[str]:
        return sorted([*self.written, *self.removed])


def copy_profile(profile: Path, dest: Path) -> Path:
    """A fresh copy of the profile folder at ``dest`` (hidden files left out)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for rel, data in _files(profile).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def take_edit(profile: Path, copy: Path) -> Edit:
    """What differs between the fixer's ``copy`` and the ``profile`` it was made from."""
    before, after = _files(profile), _files(copy)
    edit = Edit()
    for rel, data in after.items():
        if before.get(rel) != data:
            edit.written[rel] = data
    edit.removed = sorted(rel for rel in before if rel not in after)
    return edit


def apply_edit(profile: Path, edit: Edit) -> None:
    for rel, data in edit.written.items():
        target = profile / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for rel in edit.removed:
        (profile / rel).unlink(missing_ok=True)


def added_lines(diff: str) -> str:
    """The text of the lines a unified diff adds."""
    return "\n".join(
        line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
    )


def _number_counts(value: float) -> bool:
    return value != int(value) or abs(value) >= 100


def _phrase_counts(phrase: str) -> bool:
    from assay.evals.agent.checks import normalise

    word = phrase.strip()
    return len(normalise(word)) >= 2 or word[:1].isupper() or any(not ch.isalpha() for ch in word)


def _path_counts(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "/" in path.strip("/") or any(ch in "_-" or ch.isdigit() for ch in name)


def _leaks(text: str, forbidden: Forbidden) -> list[str]:
    from assay.evals.agent.checks import find_numbers, has_fact, number_matches

    low = text.casefold()
    out = [f"names scenario {c!r}" for c in dict.fromkeys(forbidden.case_ids) if c.casefold() in low]
    out += [
        f"names fixture {p!r}"
        for p in dict.fromkeys(forbidden.paths)
        if p and _path_counts(p) and p.casefold() in low
    ]
    if any(p and p.casefold() in low for p in forbidden.planted):
        out.append("quotes a planted canary or secret")
    out += [
        f"quotes ground truth {p[:60]!r}"
        for p in dict.fromkeys(forbidden.phrases)
        if _phrase_counts(p) and has_fact(text, p)
    ]
    found = find_numbers(text)
    for nf in forbidden.numbers:
        if _number_counts(nf.value) and any(number_matches(x, nf) for x in found):
            out.append(f"quotes the ground-truth number {nf.value:g}")
    return list(dict.fromkeys(out))


def find_leaks(added: str, forbidden: Forbidden, before: str = "") -> list[str]:
    """Why the ``added`` text special-cases the suite (what ``before``, the profile's text before the edit,
    already held aside); empty when it does not."""
    held = set(_leaks(before, forbidden)) if before else set()
    return [x for x in _leaks(added, forbidden) if x not in held]


def profile_text(profile: Path) -> str:
    """Every file of the profile folder as one text (what :func:`find_leaks` sets aside)."""
    return "\n".join(data.decode("utf-8", "replace") for data in _files(profile).values())


def profile_error(profile: Path) -> str | None:
    """Why the profile folder no longer loads as the reference agent's profile, or None."""
    from assay.agents import load_profile
    from assay.agents.reference.harness import ALL_TOOLS

    try:
        load_profile(profile, set(ALL_TOOLS))
    except ConfigError as exc:
        return str(exc)
    return None
