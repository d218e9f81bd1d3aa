"""What is sent: email triage (default, scored against labels), synthetic lengths, or a JSONL dataset.

A workload hands out request bodies by index (``item(i)``; negative indices are warm-up requests, drawn
so they do not repeat the first measured prompts) and, for email triage, scores each answer.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import json
import mailbox
import random
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.evals.serving._triage import (
    CATEGORIES,
    FIELDS,
    answer_format,
    parse_triage_answer,
    response_format,
)

__all__ = [
    "CATEGORIES",
    "DatasetWorkload",
    "EmailTriage",
    "LengthSpec",
    "SyntheticWorkload",
    "WorkItem",
    "Workload",
    "default_data_dir",
    "parse_triage_answer",
]

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"


def default_data_dir() -> Path:
    """``eval/serving`` of the source checkout (or of the working directory)."""
    here = Path(__file__).resolve().parents[4] / "eval" / "serving"
    return here if here.is_dir() else Path.cwd() / "eval" / "serving"


@dataclass
class WorkItem:
    key: str
    path: str
    body: dict[str, Any]
    prompt_text: str
    labels: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Workload(ABC):
    name: str
    version: str = "1"

    @abstractmethod
    def item(self, i: int) -> WorkItem: ...

    def natural_size(self) -> int | None:
        """How many distinct prompts there are (None: unbounded)."""
        return None

    def score(self, item: WorkItem, text: str) -> dict[str, Any]:
        """Per-request extras recorded in results.json (e.g. correctness)."""
        return {}

    def level_metrics(self, scored: list[dict[str, Any]]) -> dict[str, float]:
        """Metrics of one load level from the extras of its completed requests."""
        return {}


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.hexdigest()[:12]


# -- email triage ---------------------------------------------------------------------------------------
@dataclass
class Email:
    id: str
    text: str
    category: str
    urgent: bool
    personal: bool


def _yes(value: str | None, where: str) -> bool:
    v = (value or "").strip().lower()
    if v not in ("yes", "no"):
        raise ConfigError(f"{where}: label must be yes or no, got {value!r}")
    return v == "yes"


def load_mbox(path: Path) -> list[Email]:
    if not path.is_file():
        raise ConfigError(f"--mbox: {path} does not exist")
    box = mailbox.mbox(
        str(path), factory=lambda f: email.message_from_binary_file(f, policy=email.policy.default)
    )
    emails: list[Email] = []
    for n, msg in enumerate(box, 1):
        where = f"{path}: message {n}"
        cat = (msg.get("X-Triage-Category") or "").strip().lower()
        if cat not in CATEGORIES:
            raise ConfigError(f"{where}: X-Triage-Category {cat!r} is not one of {', '.join(CATEGORIES)}")
        body_part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
        body = body_part.get_content() if body_part is not None else ""
        shown = "".join(f"{h}: {msg[h]}\n" for h in ("From", "To", "Date", "Subject") if msg[h])
        emails.append(
            Email(
                id=str(msg.get("X-Triage-Id") or f"email-{n:03d}"),
                text=f"{shown}\n{body.strip()}\n",
                category=cat,
                urgent=_yes(msg.get("X-Triage-Urgent"), f"{where} X-Triage-Urgent"),
                personal=_yes(msg.get("X-Triage-Personal"), f"{where} X-Triage-Personal"),
            )
        )
    box.close()
    if not emails:
        raise ConfigError(f"--mbox: {path} holds no messages")
    return emails


class EmailTriage(Workload):
    """Each email classified with the fixed prompt; answers scored against the mailbox's labels.

    ``structured=True`` adds a ``response_format`` with the answer's JSON schema (see ``_triage``): a server
    with grammar-constrained decoding (llama.cpp) then always answers in parseable JSON. It changes what is
    sent, so it changes the suite version: runs with and without it are never compared.
    """

    name = "email-triage"
    #: output cap when none is given: three short lines, or the JSON object (with its spacing)
    DEFAULT_MAX_TOKENS = 24
    DEFAULT_MAX_TOKENS_STRUCTURED = 48

    def __init__(
        self,
        mbox: Path | None = None,
        prompt_file: Path | None = None,
        max_tokens: int | None = None,
        structured: bool = False,
    ) -> None:
        data = default_data_dir()
        self.mbox_path = mbox or data / "triage.mbox"
        self.prompt_path = prompt_file or data / "triage_prompt.txt"
        if not self.prompt_path.is_file():
            raise ConfigError(f"--prompt-file: {self.prompt_path} does not exist")
        self.emails = load_mbox(self.mbox_path)
        self.prompt = self.prompt_path.read_text(encoding="utf-8").strip()
        if "{email}" not in self.prompt:
            raise ConfigError(f"--prompt-file: {self.prompt_path} must contain the placeholder {{email}}")
        self.structured = structured
        default = self.DEFAULT_MAX_TOKENS_STRUCTURED if structured else self.DEFAULT_MAX_TOKENS
        self.max_tokens = max_tokens or default
        self.version = _sha(self.mbox_path.read_bytes(), self.prompt.encode())
        if structured:
            self.version += "+json-schema"
        self.majority = majority_labels(self.emails)

    def natural_size(self) -> int:
        return len(self.emails)

    def item(self, i: int) -> WorkItem:
        n = len(self.emails)
        mail = self.emails[i % n] if i >= 0 else self.emails[(n - 1 + i) % n]
        content = self.prompt.replace("{email}", mail.text.strip())
        labels = {"category": mail.category, "urgent": mail.urgent, "personal": mail.personal}
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": content}],
            "max_tokens": self.max_tokens,
            "temperature": 0,
        }
        if self.structured:
            body["response_format"] = response_format()
        return WorkItem(mail.id, CHAT_PATH, body, content, labels)

    def score(self, item: WorkItem, text: str) -> dict[str, Any]:
        got = parse_triage_answer(text)
        labels = item.labels or {}
        return {
            "email": item.key,
            **{f"label_{k}": labels.get(k) for k in FIELDS},
            "answer": got,
            "answer_text": text[:400],
            "answer_format": answer_format(text),
            "parsed": all(got[k] is not None for k in FIELDS),
            **{f"{k}_parsed": got[k] is not None for k in FIELDS},
            # an unparsed field is never correct, whatever the label
            **{f"{k}_ok": got[k] is not None and got[k] == labels.get(k) for k in FIELDS},
        }

    def level_metrics(self, scored: list[dict[str, Any]]) -> dict[str, float]:
        """Accuracy and parse rate per field over every completed request (unparsed = not correct), and
        ``baseline_<field>``: the accuracy of always answering the mailbox's majority label, on the same
        emails: an accuracy at or under it shows no skill."""
        if not scored:
            return {}
        n = len(scored)
        out: dict[str, float] = {}
        for k in FIELDS:
            out[f"accuracy_{k}"] = sum(bool(s[f"{k}_ok"]) for s in scored) / n
            out[f"parse_rate_{k}"] = (
                sum(bool(s.get(f"{k}_parsed", s["answer"].get(k) is not None)) for s in scored) / n
            )
            labelled = [s for s in scored if s.get(f"label_{k}") is not None]
            if labelled:
                out[f"baseline_{k}"] = sum(s[f"label_{k}"] == self.majority[k] for s in labelled) / len(
                    labelled
                )
        out["accuracy_all"] = sum(all(s[f"{k}_ok"] for k in FIELDS) for s in scored) / n
        out["answer_parse_rate"] = sum(bool(s["parsed"]) for s in scored) / n
        complete = [tuple(s["answer"][k] for k in FIELDS) for s in scored if s["parsed"]]
        if complete:
            # 1.0: the same answer for every email (a constant answerer has no skill, whatever its accuracy)
            out["answer_mode_share"] = max(Counter(complete).values()) / len(complete)
        if all(f"baseline_{k}" in out for k in FIELDS):
            out["baseline_all"] = (
                sum(all(s[f"label_{k}"] == self.majority[k] for k in FIELDS) for s in scored) / n
            )
        return out


def majority_labels(emails: list[Email]) -> dict[str, Any]:
    """The most common value of each field in the mailbox (ties: the first in label order)."""
    out: dict[str, Any] = {}
    cats = [e.category for e in emails]
    out["category"] = max(CATEGORIES, key=cats.count)
    for k in ("urgent", "personal"):
        yes = sum(bool(getattr(e, k)) for e in emails)
        out[k] = yes > len(emails) - yes
    return out


def per_category_accuracy(scored: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Category -> accuracy of each field on the emails labelled with that category."""
    table: dict[str, dict[str, float]] = {}
    for cat in CATEGORIES:
        rows = [s for s in scored if s.get("label_category") == cat]
        if rows:
            table[cat] = {k: sum(bool(r[f"{k}_ok"]) for r in rows) / len(rows) for k in FIELDS}
            table[cat]["n"] = float(len(rows))
    return table


# -- synthetic ------------------------------------------------------------------------------------------
_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "the of and to in is you that it he was for on are as with his they at be this have from or one had "
    "by word but not what all were we when your can said there use an each which she do how their if "
    "will up other about out many then them these so some her would make like him into time has look two "
    "more write go see number no way could people my than first water been call who oil its now find "
    "long down day did"
).split()


@dataclass(frozen=True)
class LengthSpec:
    """A token length: ``N``, ``uniform:LO,HI`` or ``normal:MEAN,STD`` (clipped to >= 1)."""

    kind: str
    a: float
    b: float = 0.0

    @classmethod
    def parse(cls, text: str | int, flag: str) -> LengthSpec:
        s = str(text).strip().lower()
        try:
            if s.isdigit():
                if int(s) < 1:
                    raise ValueError
                return cls("fixed", float(s))
            kind, _, args = s.partition(":")
            a, _, b = args.partition(",")
            spec = cls(kind, float(a), float(b))
        except ValueError:
            spec = None
        if (
            spec is None
            or spec.kind not in ("uniform", "normal")
            or spec.a < 1
            or spec.b < 0
            or (spec.kind == "uniform" and spec.b < spec.a)
        ):
            raise ConfigError(f"{flag}: {text!r} must be N, uniform:LO,HI or normal:MEAN,STD (tokens, >= 1)")
        return spec

    def draw(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return int(self.a)
        if self.kind == "uniform":
            return rng.randint(int(self.a), int(self.b))
        return max(1, round(rng.gauss(self.a, self.b)))

    def __str__(self) -> str:
        return str(int(self.a)) if self.kind == "fixed" else f"{self.kind}:{self.a:g},{self.b:g}"


class SyntheticWorkload(Workload):
    """Prompts of common one-token words; ``ignore_eos`` asks the server for exactly the output length."""

    name = "synthetic"

    def __init__(
        self, input_len: LengthSpec, output_len: LengthSpec, seed: int = 0, endpoint: str = "chat"
    ) -> None:
        self.input_len, self.output_len, self.seed, self.endpoint = input_len, output_len, seed, endpoint
        self.version = f"in={input_len};out={output_len};seed={seed}"

    def item(self, i: int) -> WorkItem:
        rng = random.Random(f"{self.seed}:{i}")
        n_in, n_out = self.input_len.draw(rng), self.output_len.draw(rng)
        prompt = " ".join(rng.choice(_WORDS) for _ in range(n_in))
        body: dict[str, Any] = {
            "max_tokens": n_out,
            "ignore_eos": True,
            "min_tokens": n_out,
            "temperature": 0,
        }
        if self.endpoint == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
            path = CHAT_PATH
        else:
            body["prompt"] = prompt
            path = COMPLETIONS_PATH
        return WorkItem(f"syn-{i}", path, body, prompt, extra={"target_input": n_in, "target_output": n_out})


# -- dataset --------------------------------------------------------------------------------------------
class DatasetWorkload(Workload):
    """JSONL, one request a line: ``{"prompt": str}`` or ``{"messages": [...]}``, optional ``max_tokens``, ``id``."""

    name = "dataset"

    def __init__(self, path: Path, default_max_tokens: int, endpoint: str = "chat") -> None:
        if not path.is_file():
            raise ConfigError(f"--dataset: {path} does not exist")
        self.path = path
        self.rows: list[WorkItem] = []
        raw = path.read_bytes()
        self.version = _sha(raw)
        for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"--dataset: not JSON ({exc})", path=str(path), line=n) from None
            if not isinstance(doc, dict) or not (
                isinstance(doc.get("prompt"), str) or isinstance(doc.get("messages"), list)
            ):
                raise ConfigError(
                    "--dataset: each line needs a string 'prompt' or a list 'messages'",
                    path=str(path),
                    line=n,
                )
            max_tokens = doc.get("max_tokens", doc.get("output_len", default_max_tokens))
            if not isinstance(max_tokens, int) or max_tokens < 1:
                raise ConfigError("--dataset: max_tokens must be a positive integer", path=str(path), line=n)
            body: dict[str, Any] = {"max_tokens": max_tokens, "temperature": 0}
            if "messages" in doc:
                body["messages"] = doc["messages"]
                text = "\n".join(str(m.get("content", "")) for m in doc["messages"] if isinstance(m, dict))
                route = CHAT_PATH
            elif endpoint == "chat":
                body["messages"] = [{"role": "user", "content": doc["prompt"]}]
                text, route = doc["prompt"], CHAT_PATH
            else:
                body["prompt"] = doc["prompt"]
                text, route = doc["prompt"], COMPLETIONS_PATH
            self.rows.append(WorkItem(str(doc.get("id", f"line-{n}")), route, body, text))
        if not self.rows:
            raise ConfigError(f"--dataset: {path} has no requests")

    def natural_size(self) -> int:
        return len(self.rows)

    def item(self, i: int) -> WorkItem:
        n = len(self.rows)
        return self.rows[i % n] if i >= 0 else self.rows[(n - 1 + i) % n]
