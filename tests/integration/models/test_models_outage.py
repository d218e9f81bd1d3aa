"""An outage: the llama.cpp server is killed mid-run; the calls are classified INFRA, not subject failures."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import InfraError, SubjectError
from assay.models import LlamaServer, Message, ModelInfraError, get_model

pytestmark = pytest.mark.local_model


async def test_server_killed_mid_run_is_infra() -> None:
    async with LlamaServer(ctx_size=1024) as server:
        model = get_model(server.model_string, max_retries=1, backoff_s=0.05, defaults={"temperature": 0})
        first = await model.generate([Message("user", "Say hi.")], max_tokens=8)
        assert first.text.strip()

        # kill it while a long answer is streaming
        stream = model.stream([Message("user", "Write a long story about a dragon.")], max_tokens=400)
        got = 0
        with pytest.raises(ModelInfraError) as mid:
            async for _chunk in stream:
                got += 1
                if got == 3:
                    await asyncio.to_thread(server.kill)
        assert got >= 3
        assert isinstance(mid.value, InfraError) and not isinstance(mid.value, SubjectError)

        # the next case of the run cannot connect at all
        with pytest.raises(ModelInfraError) as after:
            await model.generate([Message("user", "Say hi.")], max_tokens=8)
        assert after.value.kind == "connect"
        with pytest.raises(ModelInfraError, match="ASSAY_OPENAI_BASE_URL"):
            await model.preflight()
    assert not server.running
