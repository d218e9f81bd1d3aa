"""Grading that counts: a grader counts on an instance only once it has been shown to work there: the gold patch resolves it and an
empty one does not, in this environment, with this grader's version (the SWE-bench way of validating a
harness). A validation is cached per instance (its row's digest) and grader version under the grading work
folder; one where a patch could not be graded (the checkout or environment cannot be built) is not cached,
so it is tried again next time. A model patch on an instance whose grader is not validated is not run.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._util import Scrubber, write_scrubbed
from assay.evals.tasks._swebench_grade import DEFAULT_PLATFORM, Grading, Verdict

if TYPE_CHECKING:
    from assay.evals.tasks._swebench_data import SwebenchInstance

__all__ = [
    "LOCAL_GRADER_VERSION",
    "Validation",
    "grade_instances",
    "grader_version",
    "instance_digest",
    "validation",
    "validation_counts",
    "validation_outcomes",
    "validation_problems",
]

#: the local grader's own rules (how it builds, applies, resets and parses): a change here makes every
#: cached local validation stale
LOCAL_GRADER_VERSION = "1"
SCHEMA = 1


@dataclass
class Validation:
    """Whether ``grader`` is validated on one instance, and the gold and empty verdicts that show it."""

    instance_id: str
    grader: str
    grader_version: str
    digest: str
    validated: bool
    #: why not (empty when validated): not buildable here, or the grader is wrong on it
    reason: str
    #: "validated", "not buildable" (a patch could not be graded) or "wrong" (gold fails or empty passes)
    outcome: str
    gold: Verdict
    empty: Verdict
    cached: bool = False
    at: str = ""


def instance_digest(inst: SwebenchInstance) -> str:
    """The sha256 of the instance's row (gold and test patches, test lists, commits): another row, another
    validation."""
    return hashlib.sha256(json.dumps(inst.row(), sort_keys=True).encode()).hexdigest()


def _python_version(spec: dict[str, Any]) -> str:
    version = str(spec.get("python", "")).strip()
    exe = shutil.which(f"python{version}") if version else None
    if exe is None:
        return "none"
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    return (done.stdout or done.stderr).strip() or "?"


def grader_version(inst: SwebenchInstance, grading: Grading) -> str:
    """What a validation holds for: the grader and its version, swebench's, the spec it builds from (local),
    the Docker platform (official), this machine's architecture and, for the local grader, the Python it
    builds with."""
    from importlib.metadata import version

    from assay.evals.tasks._swebench_local import NotBuildable, local_spec

    parts = [grading.grader, f"swebench {version('swebench')}", platform.machine()]
    if grading.grader == "official":
        return "; ".join([*parts, f"docker platform {grading.docker_platform}"])
    try:
        spec = local_spec(inst.repo, inst.version, grading.specs)
    except NotBuildable:
        return "; ".join([*parts, f"local {LOCAL_GRADER_VERSION}", "no spec"])
    text = json.dumps(spec.spec, sort_keys=True)
    return "; ".join(
        [
            *parts,
            f"local {LOCAL_GRADER_VERSION}",
            f"spec {spec.source} {hashlib.sha256(text.encode()).hexdigest()[:12]}",
            _python_version(spec.spec),
        ]
    )


def _counts(v: Verdict) -> str:
    f2p, p2p = v.fail_to_pass, v.pass_to_pass
    return f"FAIL_TO_PASS {f2p[0]}/{f2p[1]}, PASS_TO_PASS {p2p[0]}/{p2p[1]}"


def _decide(gold: Verdict, empty: Verdict) -> tuple[str, str]:
    """(outcome, reason) of a gold and an empty verdict."""
    for name, v in (("gold", gold), ("empty", empty)):
        if v.status == "not_run":
            return "not buildable", f"the {name} patch could not be graded: {v.reason}"
    if gold.status != "resolved":
        return "wrong", f"the gold patch does not resolve it here ({gold.reason or _counts(gold)})"
    if empty.status == "resolved":
        return "wrong", f"the empty patch resolves it ({_counts(empty)})"
    return "validated", ""


def _cache_file(inst: SwebenchInstance, grading: Grading, digest: str) -> Path:
    return grading.work / "validated" / grading.grader / f"{inst.instance_id}-{digest[:12]}.json"


def _cached(path: Path, version: str, digest: str) -> Validation | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("schema_version") != SCHEMA or data.get("grader_version") != version:
        return None
    if data.get("digest") != digest:
        return None
    body = {k: v for k, v in data.items() if k != "schema_version"}
    body["gold"], body["empty"] = Verdict(**body["gold"]), Verdict(**body["empty"])
    return Validation(**{**body, "cached": True})


def validation(inst: SwebenchInstance, grading: Grading) -> Validation:
    """Whether ``grading``'s grader is validated on ``inst``: the cached answer for this instance row and
    grader version, else the gold and the empty patch graded now (and the answer cached when both ran)."""
    version, digest = grader_version(inst, grading), instance_digest(inst)
    path = _cache_file(inst, grading, digest)
    found = _cached(path, version, digest)
    if found is not None:
        return found
    gold = grading.one(inst, "gold", inst.patch)
    empty = grading.one(inst, "empty", "")
    outcome, reason = _decide(gold, empty)
    made = Validation(
        instance_id=inst.instance_id,
        grader=grading.grader,
        grader_version=version,
        digest=digest,
        validated=outcome == "validated",
        reason=reason,
        outcome=outcome,
        gold=gold,
        empty=empty,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    if outcome != "not buildable":  # a build that failed may work next time: asked again
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {"schema_version": SCHEMA, **asdict(made)}
        body.pop("cached")
        write_scrubbed(path, json.dumps(body, indent=1) + "\n", Scrubber())
    return made


def validation_outcomes(verdicts: Sequence[Verdict]) -> dict[str, tuple[str, str]]:
    """Per instance with a gold and an empty verdict among ``verdicts``: (outcome, reason) as
    :func:`validation` decides them."""
    pairs: dict[str, dict[str, Verdict]] = {}
    for v in verdicts:
        if v.patch in ("gold", "empty"):
            pairs.setdefault(v.instance_id, {})[v.patch] = v
    return {iid: _decide(p["gold"], p["empty"]) for iid, p in pairs.items() if len(p) == 2}


def validation_counts(checks: Sequence[Validation]) -> dict[str, list[tuple[str, str]]]:
    """The instances of ``checks`` by outcome ("validated", "not buildable", "wrong"), each with its reason
    (an instance checked more than once counts once: its last check)."""
    last = {c.instance_id: c for c in checks}
    out: dict[str, list[tuple[str, str]]] = {"validated": [], "not buildable": [], "wrong": []}
    for iid, c in last.items():
        out[c.outcome].append((iid, c.reason))
    return out


def grade_instances(
    instances: Sequence[SwebenchInstance],
    patches: dict[str, str],
    grader: str,
    work: Path,
    *,
    validate: bool = False,
    keep_images: bool = False,
    mirrors: Path | None = None,
    repo_specs: Path | None = None,
    repo_cache: Path | None = None,
    docker_platform: str | None = None,
    offline: bool = False,
    found: list[Validation] | None = None,
) -> list[Verdict]:
    """Grade ``patches[instance_id]`` (a missing one is not run) with ``grader`` (``official``/``local``, see
    :func:`~assay.evals.tasks._swebench_grade.resolve_grader`). A model patch counts only where the grader is validated on its instance (gold
    resolves, empty does not, here; :func:`validation`, cached): else
    it is not run, with the reason. With ``validate``, the gold and empty verdicts come first. Each
    validation used is appended to ``found`` when given."""
    from assay.evals.tasks._swebench_local import load_repo_specs

    grading = Grading(
        grader,
        work,
        keep_images=keep_images,
        mirrors=mirrors,
        specs=load_repo_specs(repo_specs) if grader == "local" else {},
        cache=repo_cache,
        docker_platform=docker_platform or DEFAULT_PLATFORM,
        offline=offline,
    )
    verdicts: list[Verdict] = []
    for inst in instances:
        patch = patches.get(inst.instance_id)
        wanted = patch is not None and bool(patch.strip())
        check = validation(inst, grading) if validate or wanted else None
        if check is not None and found is not None:
            found.append(check)
        if validate and check is not None:
            verdicts += [check.gold, check.empty]
            if not patches:
                continue
        if patch is None:
            verdicts.append(Verdict(inst.instance_id, grader, "model", "not_run", reason="no prediction"))
        elif not wanted:
            verdicts.append(Verdict(inst.instance_id, grader, "model", "unresolved", reason="empty patch"))
        elif check is not None and not check.validated:
            why = f"the grader is not validated on this instance: {check.reason}"
            verdicts.append(
                Verdict(inst.instance_id, grader, "model", "not_run", reason=why, validated=False)
            )
        else:
            verdicts.append(replace(grading.one(inst, "model", patch), validated=True))
    return verdicts


def validation_problems(verdicts: Sequence[Verdict]) -> list[str]:
    """What ``--validate`` found: per instance whose grader is not validated, why (its gold patch does not
    resolve it, its empty one does, or one of them could not be graded)."""
    return [f"{iid}: {reason}" for iid, (outcome, reason) in validation_outcomes(verdicts).items() if reason]
