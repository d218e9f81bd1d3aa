"""Small agents for the ``python`` harness tests (loaded as ``python:cliagents_pyagent:<fn>``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from assay.agents import AgentResult, Route, ToolCallRecord


async def edit_agent(prompt: str, workdir: Path, route: Route | None) -> dict[str, Any]:
    """Asks the model on its route what to write, writes it, reports the call and the tokens."""
    assert route is not None and route.openai_base_url
    async with httpx.AsyncClient() as client:
        reply = await client.post(
            f"{route.openai_base_url}/chat/completions",
            json={"model": route.model, "messages": [{"role": "user", "content": prompt}]},
        )
    body = reply.json()
    text = body["choices"][0]["message"]["content"]
    (workdir / "out.txt").write_text(text)
    return {
        "answer": f"wrote {len(text)} chars",
        "tool_calls": [
            {
                "name": "write_file",
                "kind": "write",
                "arguments": {"path": "out.txt"},
                "edited_paths": ["out.txt"],
            }
        ],
        "usage": {
            "input_tokens": body["usage"]["prompt_tokens"],
            "output_tokens": body["usage"]["completion_tokens"],
            "calls": 1,
            "cost_source": "harness_counts",
        },
        "model_ran": body["model"],
    }


def echo_history(prompt: str, history: list[dict[str, Any]], session_id: str | None) -> str:
    return f"{len(history)} earlier messages; session={session_id}; you said: {prompt}"


def record_agent(**kwargs: Any) -> AgentResult:
    return AgentResult(
        harness="mine",
        answer=str(sorted(kwargs)),
        tool_record=[ToolCallRecord(name="shell", kind="shell", command="ls", exit_code=0)],
    )


def slow_sync(prompt: str) -> str:
    time.sleep(3)
    return "late"


async def slow_async(prompt: str) -> str:
    await asyncio.sleep(30)
    return "late"


def broken(prompt: str) -> str:
    raise RuntimeError("the agent fell over")


def wrong_type(prompt: str) -> int:
    return 42


def needs_more(prompt: str, temperature: float) -> str:
    return prompt


NOT_CALLABLE = 3
