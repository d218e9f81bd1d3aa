"""Flags both retrieval components take, declared once so `--component rag|code` share their meaning."""

from __future__ import annotations

import click


def shared_retrieval_options() -> list[click.Option]:
    return [
        click.Option(
            ["--dataset"], default=None, help="Queries: an assay dataset file, or beir:DIR for a BEIR folder."
        ),
        click.Option(
            ["--embedder"],
            default=None,
            help="Embedder spec (default: rag uses hash for pr and local for full; code uses local).",
        ),
        click.Option(
            ["--tolerance"],
            type=click.FloatRange(0, 1),
            default=None,
            help="How far a gated quality metric may fall before the gate fails "
            "(default: rag 0.02 or 1.5/questions, code 0.05).",
        ),
        click.Option(["--offline"], is_flag=True, default=False, help="Never touch the network."),
    ]
