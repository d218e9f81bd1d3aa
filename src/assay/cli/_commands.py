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
    "agent": "assay.cli._agent:agent_group",
    "gateway": "assay.cli._gateway:gateway_command",
    "hillclimb": "assay.cli._hillclimb:hillclimb_command",
    "view": "assay.cli._view:view_command",
    "ci": "assay.cli._ci:ci_group",
    "trend": "assay.cli._ci:trend_command",
    "scorecard": "assay.cli._ci:scorecard_command",
    "cost": "assay.cli._ci:cost_command",
    "import": "assay.cli._import:import_command",
    "export": "assay.cli._import:export_group",
}

#: subcommands of `assay eval` that are not benchmarks (a benchmark's own command, subcommands and help are
#: declared on its class and read from the registry: ``assay.evals.get_benchmark``)
EVAL_EXTRA_COMMANDS: dict[str, str] = {
    "noise": "assay.cli._gate:noise_command",
}

#: one-line help shown by `assay --help` without importing each command (and its heavy dependencies)
SHORT_HELP: dict[str, str] = {
    "eval": "Run a benchmark: agent (multi-turn scenarios), retrieval (documents, code search), memory, benchmark (serving speed), tasks (real coding work), code (edits scored by tests), sessions (replayed real sessions).",
    "runs": "List and inspect run directories.",
    "models": "List chat model providers; try one model with one prompt.",
    "serve-local": "Serve the embedded model over an OpenAI-compatible HTTP API.",
    "compare": "Compare two runs; exit 2 on a regression, 3 if not comparable.",
    "gate": "Check a run against an expectations file.",
    "propose": "Propose expectations that the given runs meet.",
    "health": "Flag saturated, always-failing, inverted and flaky cases across runs.",
    "rag": "Index documents, search them, ask questions (the RAG SDK).",
    "code-index": "Build and search a code index.",
    "memory": "Show, search and forget what the memory store holds.",
    "agent": "Run an agent under test in a workdir (run PROMPT, chat, serve).",
    "gateway": "Serve a model to agents on loopback (OpenAI and Anthropic APIs).",
    "hillclimb": "Edit the agent one change at a time; keep only gains that hold on held-out scenarios.",
    "view": "Browse runs, cases, comparisons and trends in a browser (read-only; --bundle for a static site).",
    "ci": "Run assay in CI: plan what an event runs, run it, verify a release, write GitHub workflows.",
    "trend": "Track a backlog metric run after run (trend.json, PNG); suggest moves, never apply them.",
    "scorecard": "Fold one run per benchmark into a weighted release scorecard; --compare fails on a drop.",
    "cost": "Sum tokens and cost per benchmark and role across runs, with each cost's source.",
    "export": "Write an assay run as another tool's result (inspect: an Inspect AI log for inspect view).",
    "import": "Read another eval tool's result (Inspect AI, SWE-bench, promptfoo, lm-eval, tau2-bench) into a run directory.",
}

#: one-line help of the extra commands for `assay eval --help`
EVAL_SHORT_HELP: dict[str, str] = {
    "noise": "Run one eval N times (or read N runs) and write noise.json.",
}
