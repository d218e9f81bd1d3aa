"""The text protocol the embedded model is served tools in (the model's part is tested with the real model in
tests/integration/models/test_models_llama_server.py)."""

from __future__ import annotations

from assay.models._llama_tools import plain_messages, tools_text

SEARCH = {
    "type": "function",
    "function": {
        "name": "query_documents",
        "description": "Search the documents.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "k": {"type": "integer"},
            },
            "required": ["query"],
        },
    },
}


def test_tools_are_told_in_the_system_message_with_the_protocol() -> None:
    text = tools_text([SEARCH])
    assert (
        "functions.query_documents: Search the documents. Arguments: query (string): what to look for; "
        "k (integer, optional)." in text
    )
    assert "functions.<tool name>:" in text and "message: and your answer" in text
    out = plain_messages(
        [{"role": "system", "content": "Be careful."}, {"role": "user", "content": "Q3?"}], [SEARCH]
    )
    assert out[0] == {"role": "system", "content": "Be careful.\n\n" + text}
    assert plain_messages([{"role": "user", "content": "Q3?"}], [SEARCH])[0] == {
        "role": "system",
        "content": text,
    }


def test_a_call_and_its_result_are_one_tool_turn_without_the_protocols_opening() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "query_documents", "arguments": '{"query": "Q3"}'},
    }
    out = plain_messages(
        [
            {"role": "user", "content": "Q3?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "revenue 4,820"},
            {"role": "assistant", "content": "4.82 million"},
        ],
        [],
    )
    assert out == [
        {"role": "user", "content": "Q3?"},
        {"role": "tool", "content": 'Result of query_documents({"query": "Q3"}):\nrevenue 4,820'},
        {"role": "assistant", "content": "message:\n4.82 million"},
    ]
    assert not any("functions." in m["content"] for m in out)
