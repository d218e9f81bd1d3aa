"""Top-level commands, loaded lazily by name so `assay --help` stays fast."""

from __future__ import annotations

#: command name -> "module:attr" of a click command or group
COMMANDS: dict[str, str] = {
    "eval": "assay.cli._eval:eval_group",
    "runs": "assay.cli._runs:runs_group",
    "models": "assay.cli._models:models_group",
    "serve-local": "assay.cli._models:serve_local_command",
    "compare": "assay.cli._gate:compare_command",
    "gate": "assay.cli._gate:gate_command",
    "propose": "assay.cli._gate:propose_command",
    "health": "assay.cli._gate:health_command",
    "rag": "assay.cli._rag:rag_group",
    "code-index": "assay.cli._codeindex:code_index_group",
    "memory": "assay.cli._memory:memory_group",
}

#: extra subcommands of `assay eval` that are not benchmarks
EVAL_EXTRA_COMMANDS: dict[str, str] = {
    "noise": "assay.cli._gate:noise_command",
}
