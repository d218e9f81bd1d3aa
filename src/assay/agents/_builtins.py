"""The built-in harnesses, registered by name (imported on first use). One line each, append only."""

from __future__ import annotations

from assay.agents._harness import register_harness

register_harness("claude-code", "assay.agents.claude_code:ClaudeCodeHarness")
register_harness("reference", "assay.agents.reference:ReferenceHarness")
register_harness("python", "assay.agents._python:PythonHarness")
register_harness("command", "assay.agents._command:CommandHarness")
register_harness("http", "assay.agents._http:HttpHarness")
