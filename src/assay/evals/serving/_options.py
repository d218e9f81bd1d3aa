"""``assay eval benchmark``'s own options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import Field

from assay.exec import BenchmarkOptions, Flag

#: the workloads a --suite or --workload names
WorkloadName = Literal["email-triage", "synthetic", "dataset"]
WORKLOADS: tuple[str, ...] = get_args(WorkloadName)


class ServingOptions(BenchmarkOptions):
    model: Annotated[
        str,
        Flag(
            "--model",
            show_default=True,
            help="openai-compat/NAME@URL, or local/smollm2 (assay starts and stops the embedded server).",
        ),
    ] = "local/smollm2"
    ctx_size: Annotated[
        int | None,
        Flag(
            "--ctx-size",
            help="Context size: the embedded server starts with it (default 2048); a server running with "
            "another one is an error.",
        ),
    ] = None
    workload: Annotated[
        WorkloadName | None, Flag("--workload", help="What to send (default: the --suite; email-triage).")
    ] = None
    dataset: Annotated[
        Path | None,
        Flag(
            "--dataset",
            help="JSONL of requests: {'prompt': ...} or {'messages': [...]}, optional max_tokens.",
        ),
    ] = None
    mbox: Annotated[Path | None, Flag("--mbox", help="Mailbox for email-triage.")] = None
    prompt_file: Annotated[Path | None, Flag("--prompt-file", help="Triage prompt file.")] = None
    input_len: Annotated[
        str | None,
        Flag(
            "--input-len", help="synthetic: input tokens: N, uniform:LO,HI or normal:MEAN,STD (default 256)."
        ),
    ] = None
    output_len: Annotated[
        str | None, Flag("--output-len", help="synthetic: output tokens (same forms; default 128).")
    ] = None
    structured: Annotated[
        bool,
        Flag(
            "--structured",
            help="email-triage: send a JSON-schema response_format (json_object + schema; llama.cpp "
            "decodes under its grammar, so every answer parses). Changes the suite version: not "
            "comparable with runs without it.",
        ),
    ] = False
    max_tokens: Annotated[
        int | None,
        Flag("--max-tokens", help="Output cap (email-triage 24, 48 with --structured; dataset 128)."),
    ] = None
    endpoint: Annotated[Literal["chat", "completions"], Flag("--endpoint", show_default=True)] = "chat"
    concurrency: Annotated[
        str | None, Flag("--concurrency", help="Requests in flight: N or a list 1,4,8 (one level each).")
    ] = None
    request_rate: Annotated[
        str | None,
        Flag(
            "--request-rate",
            help="Arrivals per second: R or a list 1,2,inf (one level each); see --burstiness.",
        ),
    ] = None
    burstiness: Annotated[
        float,
        Flag(
            "--burstiness",
            show_default=True,
            help="Gamma shape of arrival gaps: 1 = Poisson, <1 burstier, >1 more regular.",
        ),
    ] = 1.0
    num_requests: Annotated[
        int | None,
        Flag("--num-requests", help="Measured requests per level (default: the workload's size, or 100)."),
    ] = None
    duration: Annotated[
        float | None, Flag("--duration", help="Seconds of sending per level (instead of a count).")
    ] = None
    warmup: Annotated[
        int | None, Field(ge=0), Flag("--warmup", help="Warm-up requests per level, excluded (default 1-4).")
    ] = None
    sweep: Annotated[
        bool,
        Flag(
            "--sweep",
            help="Synchronous, then max throughput, then --sweep-steps rates in between; stops at saturation.",
        ),
    ] = False
    sweep_steps: Annotated[int, Flag("--sweep-steps", show_default=True)] = 4
    slo: Annotated[
        str | None,
        Flag("--slo", help="Goodput SLOs in ms, e.g. ttft=500,tpot=50 (keys ttft, tpot, itl, e2e)."),
    ] = None
    max_error_rate: Annotated[
        float | None,
        Field(ge=0, lt=1),
        Flag(
            "--max-error-rate",
            help="A level fails when more than this share of its requests errored or timed out "
            "(default 0.01).",
        ),
    ] = None
    request_timeout: Annotated[
        float,
        Field(gt=0),
        Flag("--request-timeout", show_default=True, help="Seconds before one request counts as a timeout."),
    ] = 300.0
