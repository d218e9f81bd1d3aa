"""``--max-steps`` for every harness: model calls counted at the model gateway, the run cut off past the cap.

The gateway is the one place every agent's model calls pass, whichever harness runs it (a CLI, a Python
function, an HTTP service): :func:`run_step_capped` sets the route's run a limit before ``harness.run`` and lifts
it after; the gateway refuses the calls past it without sending them upstream, and the run is marked
``cut_off="steps"``.
"""

from __future__ import annotations

from typing import Any

from assay.agents._cliproc import gateway_usage

__all__ = ["run_step_capped", "step_cap_applies"]


async def run_step_capped(harness: Any, prompt: str, spec: Any) -> Any:
    """``harness.run(prompt, spec)`` held to ``spec.limits.max_steps`` model calls at the model gateway, the
    one place every harness's calls pass: the calls past it are refused there, and the run comes back
    ``cut_off="steps"`` (what the agent did until then kept; its failure on the refused call is the cut, not
    a crash). Where the route leads to no gateway (no route, a plain server, no run id) the harness runs as is
    and the caller decides whether its own cap (the reference agent's loop, Claude Code's ``--max-turns``)
    holds it; :func:`step_cap_applies` says which."""
    cap = spec.limits.max_steps
    since = await _limit(spec.route, cap) if cap is not None else None
    try:
        result = await harness.run(prompt, spec)
    finally:
        if since is not None:
            await _limit(spec.route, None)
    if since is None:
        return result
    counted = await gateway_usage(spec.route, since)
    if counted is not None and counted.cut_off_calls:
        result.cut_off = "steps"
        result.error = None
        result.steps = result.steps or counted.calls - counted.cut_off_calls
    return result


async def step_cap_applies(route: Any) -> bool:
    """Whether :func:`run_step_capped` can hold a run on ``route`` to its step limit (a gateway with run ids)."""
    return route is not None and await _limit(route, None) is not None


async def _limit(route: Any, max_calls: int | None) -> int | None:
    if route is None:
        return None
    try:
        from assay.agents.gateway import limit_steps
    except ImportError:
        return None
    from assay.errors import ConfigError

    try:
        return await limit_steps(route, max_calls)
    except ConfigError:  # a route to a plain server, not the gateway
        return None
