"""Claude Code's own session files (``~/.claude/projects/<slug>/*.jsonl``): which records make the conversation.

Read by eval sessions (replaying a session) and eval agent's drafts (a scenario from a session): one rule.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BROKEN",
    "BROKEN_REQUESTS",
    "REWOUND",
    "REWOUND_REQUESTS",
    "final_chain",
    "is_claude_session_file",
]


def _bump(counts: dict[str, int], why: str, n: int = 1) -> None:
    counts[why] = counts.get(why, 0) + n


#: what the records off the final chain are counted under (records; and the user's requests among them)
REWOUND = "off the final chain (a rewound or edited branch)"
BROKEN = "off the final chain (lost: the chain breaks at a parent that is not in the file)"
REWOUND_REQUESTS = "requests on a rewound or edited branch"
BROKEN_REQUESTS = "requests lost to a broken chain"


def _is_request(rec: dict[str, Any]) -> bool:
    """A user's own message (text, not a tool result, a caveat or a compaction summary)."""
    if (
        rec.get("type") != "user"
        or rec.get("isMeta")
        or rec.get("isCompactSummary")
        or rec.get("isSidechain")
    ):
        return False
    content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
    if isinstance(content, str):
        return bool(content.strip()) and not content.startswith("[Request interrupted by user")
    blocks = [b for b in content or [] if isinstance(b, dict)]
    texts = [str(b.get("text") or "") for b in blocks if b.get("type") == "text"]
    if any(t.startswith("[Request interrupted by user") for t in texts):
        return False  # the client's marker of an interruption, not a message
    return any(t.strip() for t in texts) and not any(b.get("type") == "tool_result" for b in blocks)


def _tip_before(order: list[str], at: int, by_uuid: dict[str, dict[str, Any]], taken: set[str]) -> str | None:
    """The last record written before position ``at`` (not a subagent's, not already on the chain)."""
    for uuid in reversed(order[:at]):
        if uuid not in taken and not by_uuid[uuid].get("isSidechain"):
            return uuid
    return None


def _walk(
    node: str | None, by_uuid: dict[str, dict[str, Any]], order: list[str], taken: set[str]
) -> tuple[list[str], str | None]:
    """The chain from ``node`` back to its root (newest first) and the parent it names but the file lacks.

    A compaction (a record with no parent) continues through its ``logicalParentUuid``; when that names a
    record not in the file, from the tip of the chain before the compaction (the last record written before
    it): Claude Code does not always write the logical parent, and the conversation before it is the user's.
    """
    where = {u: i for i, u in enumerate(order)}
    chain: list[str] = []
    while node and node not in taken:
        if node not in by_uuid:
            return chain, node
        taken.add(node)
        chain.append(node)
        rec = by_uuid[node]
        parent = rec.get("parentUuid")
        if not parent and rec.get("logicalParentUuid"):
            parent = rec["logicalParentUuid"]
            if parent not in by_uuid:
                parent = _tip_before(order, where[node], by_uuid, taken)
        node = parent
    return chain, None


def final_chain(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """A Claude Code session file's records on the conversation's final chain, oldest first, and what was skipped.

    The chain runs from the last record back to the root through ``parentUuid`` (a compaction continues it
    through ``logicalParentUuid``, or, when that record is not in the file, from the tip of the chain before
    the compaction); records written twice and records without a ``uuid`` (bookkeeping) are counted by why,
    not returned. Records off the chain are counted apart: those of a rewound or edited branch, and those
    lost where the chain breaks at a parent the file does not hold (with the user's requests among each).
    Bookkeeping that has a uuid is a link of the chain and is returned.
    """
    skipped: dict[str, int] = {}
    by_uuid: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for rec in records:
        kind = str(rec.get("type", ""))
        if not rec.get("uuid"):
            _bump(skipped, f"bookkeeping ({kind or 'untyped'})")
            continue
        uuid = str(rec["uuid"])
        if uuid in by_uuid:
            _bump(skipped, "the same record written twice")
            continue
        by_uuid[uuid] = rec
        order.append(uuid)
    if not order:
        return [], skipped
    taken: set[str] = set()
    chain, broken = _walk(order[-1], by_uuid, order, taken)
    chain.reverse()
    lost: list[str] = []
    if (
        broken is not None and chain
    ):  # what the chain held before the break: the last record written before it
        tip = _tip_before(order, order.index(chain[0]), by_uuid, taken)
        lost, _ = _walk(tip, by_uuid, order, taken)
    rewound = [u for u in order if u not in taken]
    for why, asks, off in ((REWOUND, REWOUND_REQUESTS, rewound), (BROKEN, BROKEN_REQUESTS, lost)):
        if off:
            _bump(skipped, why, len(off))
        requests = sum(_is_request(by_uuid[u]) for u in off)
        if requests:
            _bump(skipped, asks, requests)
    return [by_uuid[u] for u in chain], skipped


def is_claude_session_file(records: list[dict[str, Any]]) -> bool:
    """Whether ``records`` are a Claude Code session file (uuid-linked records), not its stream-json."""
    return any("uuid" in r and "parentUuid" in r for r in records)
