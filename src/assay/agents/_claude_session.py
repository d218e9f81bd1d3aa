"""Claude Code's own session files (``~/.claude/projects/<slug>/*.jsonl``): which records make the conversation.

Read by eval sessions (replaying a session) and eval agent's drafts (a scenario from a session): one rule.
"""

from __future__ import annotations

from typing import Any

__all__ = ["final_chain", "is_claude_session_file"]


def _bump(counts: dict[str, int], why: str, n: int = 1) -> None:
    counts[why] = counts.get(why, 0) + n


def final_chain(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """A Claude Code session file's records on the conversation's final chain, oldest first, and what was skipped.

    The chain runs from the last record back to the root through ``parentUuid`` (a compaction continues it
    through ``logicalParentUuid``); records off it (a rewound or edited branch), records written twice and
    records without a ``uuid`` (bookkeeping) are counted by why, not returned. Bookkeeping that has a uuid is
    a link of the chain and is returned.
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
    chain: list[str] = []
    if order:
        seen: set[str] = set()
        node: str | None = order[-1]
        while node and node in by_uuid and node not in seen:
            seen.add(node)
            chain.append(node)
            rec = by_uuid[node]
            node = rec.get("parentUuid") or rec.get("logicalParentUuid")
        chain.reverse()
        off = len(order) - len(chain)
        if off:
            _bump(skipped, "off the final chain (a rewound or edited branch)", off)
    return [by_uuid[u] for u in chain], skipped


def is_claude_session_file(records: list[dict[str, Any]]) -> bool:
    """Whether ``records`` are a Claude Code session file (uuid-linked records), not its stream-json."""
    return any("uuid" in r and "parentUuid" in r for r in records)
