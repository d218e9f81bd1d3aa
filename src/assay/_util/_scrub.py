"""Secret scrubbing: every artifact passes through here before it is written.

Two kinds of secret are removed: the *values* of secret-looking environment variables (``*_KEY``,
``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``) and *secret-shaped* strings (provider API keys, bearer tokens,
private key blocks, AWS keys). If a known secret value would still reach a file after scrubbing, the write
fails with :class:`SecretLeakError` instead.

:class:`Anonymizer` goes further for text that leaves the machine as data (a scenario drafted from a real
session or issue): it also replaces who and where with fixture values: workdirs and home folders
(``/home/user/project``, ``/home/user``), e-mail addresses (``user@example.com``), host names
(``host.example``) and IPv4 addresses other than loopback (``192.0.2.1``, a documentation address).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.errors import SecretLeakError

MARKER = "[REDACTED]"

_SECRET_ENV_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET|^TOKEN|^SECRET)$|PASSWORD|PASSWD", re.IGNORECASE)
#: env var values shorter than this are too common to treat as secrets (e.g. "1", "true")
_MIN_SECRET_LEN = 8

SECRET_SHAPES: tuple[str, ...] = (
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"(?i:aws_secret_access_key)\s*[=:]\s*[A-Za-z0-9/+=]{40}",
    r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    r"\bglpat-[A-Za-z0-9_\-]{20,}\b",
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",
    r"\bhf_[A-Za-z0-9]{30,}\b",
    r"\b(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*",
)
#: one alternation: a single pass over the text instead of one per shape
_ANY_SHAPE = re.compile("|".join(f"(?:{shape})" for shape in SECRET_SHAPES))
#: lowercased text every match of a shape above begins with; a text holding none of them needs no regex pass
#: (the alternation costs ~50 us on a 300-byte journal line, these ``in`` checks ~4 us)
SHAPE_HINTS: tuple[str, ...] = (
    "-----begin", "sk-", "akia", "asia", "aws_secret_access_key", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "glpat-", "xox", "aiza", "hf_", "bearer",
)  # fmt: skip


def may_hold_shape(text: str) -> bool:
    """Whether ``text`` could hold a secret-shaped string (False: it surely holds none)."""
    low = text.lower()
    return any(hint in low for hint in SHAPE_HINTS)


def looks_like_secret_name(name: str) -> bool:
    """Whether an environment variable's name looks like it holds a secret (``*_KEY``, ``*_TOKEN``, ...)."""
    return _SECRET_ENV_NAME.search(name) is not None


def secret_env_values(env: Mapping[str, str] | None = None) -> set[str]:
    """Values of environment variables whose names look secret."""
    env = os.environ if env is None else env
    return {v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_SECRET_LEN}


class Scrubber:
    """Replaces secrets with :data:`MARKER` and refuses to let a known secret value through."""

    def __init__(self, env: Mapping[str, str] | None = None, extra_values: Iterable[str] = ()) -> None:
        values = secret_env_values(env) | {v for v in extra_values if len(v) >= _MIN_SECRET_LEN}
        # longest first so a secret containing another is replaced whole
        self.values = sorted(values, key=len, reverse=True)

    def add(self, value: str) -> None:
        if len(value) >= _MIN_SECRET_LEN and value not in self.values:
            self.values = sorted([*self.values, value], key=len, reverse=True)

    def scrub_text(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MARKER)
        return _ANY_SHAPE.sub(MARKER, text) if may_hold_shape(text) else text

    def scrub(self, obj: Any) -> Any:
        """Scrub every string inside nested dicts/lists (keys included)."""
        if isinstance(obj, str):
            return self.scrub_text(obj)
        if isinstance(obj, Mapping):
            return {self.scrub(k): self.scrub(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self.scrub(v) for v in obj]
        return obj

    def check(self, text: str, where: str) -> None:
        """Raise if a known secret value (raw or JSON-escaped) is in ``text``."""
        for value in self.values:
            if value in text or json.dumps(value)[1:-1] in text:
                raise SecretLeakError(f"refusing to write {where}: it would contain a secret value")

    def clean(self, text: str, where: str) -> str:
        cleaned = self.scrub_text(text)
        self.check(cleaned, where)
        return cleaned


def write_scrubbed(path: Path, text: str, scrubber: Scrubber) -> None:
    """Write ``text`` atomically after scrubbing it (temp file, fsync, rename)."""
    cleaned = scrubber.clean(text, str(path))
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(cleaned)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


FIXTURE_WORKDIR = "/home/user/project"
FIXTURE_HOME = "/home/user"
FIXTURE_EMAIL = "user@example.com"
FIXTURE_HOST = "host.example"
FIXTURE_IP = "192.0.2.1"

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+\b")
#: a home folder: /home/NAME, /Users/NAME, /root; C:\\Users\\NAME
_HOME = re.compile(
    r"(?:/home|/Users)/(?!user(?:/|\b))[A-Za-z0-9._\-]+|/root(?=/|\b)|[A-Za-z]:\\Users\\[^\\\s]+"
)
#: a temp folder an agent ran in (/tmp/NAME, macOS's /private/var/folders/...)
_TEMP = re.compile(
    r"(?:/private)?/var/folders/[A-Za-z0-9_\-]+/[A-Za-z0-9_\-]+/T/[A-Za-z0-9._\-]+|/tmp/[A-Za-z0-9._\-]+"
)
#: a host name ends in a top-level domain seen in hosts, not in code (``logging.info``, ``request.app`` stay)
_HOST = re.compile(
    r"\b(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+"
    r"(?:com|net|org|io|internal|lan|corp|cloud|edu|gov|intra|localdomain)\b(?![.\-]?[A-Za-z0-9])",
    re.IGNORECASE,
)
#: reserved for documentation (RFC 2606 / 6761): already fixture values
_KEEP_HOST = re.compile(
    r"(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost)$", re.IGNORECASE
)
_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])")
_KEEP_IP = ("127.", "0.0.0.0", "192.0.2.")


class Anonymizer(Scrubber):
    """A :class:`Scrubber` that also replaces paths, e-mails, host names and addresses with fixture values.

    ``workdirs`` are the folders the agent worked in (each becomes :data:`FIXTURE_WORKDIR`), ``homes`` its
    home folders (:data:`FIXTURE_HOME`); any other ``/home/NAME`` or ``/Users/NAME`` is a home folder too.
    """

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        extra_values: Iterable[str] = (),
        *,
        workdirs: Iterable[str] = (),
        homes: Iterable[str] = (),
    ) -> None:
        super().__init__(env, extra_values)
        places = [(w.rstrip("/"), FIXTURE_WORKDIR) for w in workdirs if w.strip("/")]
        places += [(h.rstrip("/"), FIXTURE_HOME) for h in homes if h.strip("/")]
        # longest first, so a workdir inside a home folder becomes the project, not the home
        self.places = sorted(places, key=lambda p: len(p[0]), reverse=True)

    def scrub_text(self, text: str) -> str:
        text = super().scrub_text(text)
        for place, fixture in self.places:
            text = text.replace(place, fixture)
        text = _EMAIL.sub(FIXTURE_EMAIL, text)
        text = _HOME.sub(FIXTURE_HOME, text)
        text = _TEMP.sub(FIXTURE_WORKDIR, text)
        text = _HOST.sub(lambda m: m.group(0) if _KEEP_HOST.search(m.group(0)) else FIXTURE_HOST, text)
        return _IPV4.sub(lambda m: m.group(0) if m.group(0).startswith(_KEEP_IP) else FIXTURE_IP, text)
