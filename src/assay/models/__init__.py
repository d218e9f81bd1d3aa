"""Chat models: one async protocol, providers selected by a ``provider/model`` string.

model = get_model("local/smollm2")                       # llama.cpp in a server child (extra 'local')
model = get_model("openai-compat/qwen3@http://127.0.0.1:8080/v1")
model = get_model("scripted/tests/fixtures/script.yaml")
out = await model.generate([Message("user", "hi")], stream=True)
out.text, out.usage.cost_usd, out.timings.ttft_s
"""

from __future__ import annotations

from assay.models._base import BaseChatModel, ChunkStream
from assay.models._errors import ModelInfraError, ModelResponseError
from assay.models._http import serve_in_process, ssl_context
from assay.models._registry import PROVIDERS, ProviderInfo, get_model, preflight, register_provider
from assay.models._retry import AdaptiveLimiter, RetryPolicy
from assay.models._server import LlamaServer, embedded_gguf_path, serve_forever
from assay.models._types import ChatModel, Message, ModelOutput, StreamChunk, Timings, Tool, ToolCall
from assay.models.cost import BillingMeter, RateCard, load_rate_card, metered_usage, price_usage
from assay.models.trial import TryResult, try_model
from assay.runs import Usage

__all__ = [
    "PROVIDERS",
    "AdaptiveLimiter",
    "BaseChatModel",
    "BillingMeter",
    "ChatModel",
    "ChunkStream",
    "LlamaServer",
    "Message",
    "ModelInfraError",
    "ModelOutput",
    "ModelResponseError",
    "ProviderInfo",
    "RateCard",
    "RetryPolicy",
    "StreamChunk",
    "Timings",
    "Tool",
    "ToolCall",
    "TryResult",
    "Usage",
    "embedded_gguf_path",
    "get_model",
    "load_rate_card",
    "metered_usage",
    "preflight",
    "price_usage",
    "register_provider",
    "serve_forever",
    "serve_in_process",
    "ssl_context",
    "try_model",
]
