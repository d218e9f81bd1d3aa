"""Chat models: one async protocol, providers selected by a ``provider/model`` string."""

from __future__ import annotations

from assay.models._types import ChatModel, Message, ModelOutput, StreamChunk, Timings, Tool, ToolCall
from assay.models._usage import Usage

__all__ = ["ChatModel", "Message", "ModelOutput", "StreamChunk", "Timings", "Tool", "ToolCall", "Usage"]
