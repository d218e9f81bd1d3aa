"""``assay ci init github``: GitHub Actions workflows that run assay the way the tiers file says.

Four workflows: pull requests (the ``pr`` tier, gated against the committed baselines), release tags (``ci
plan`` decides: RC tags run ``smoke`` or ``full``, a final tag runs ``verify``; an issue is filed with ``gh``
when a tag run does not pass), a weekly backlog (with the trend artifact carried from week to week) and a
dispatch with ``tier``, ``categories``, ``scenarios`` and ``model`` inputs. The judge's key is given only to
the step that runs the evals; every artifact is scanned for secrets (``assay ci scan``) before upload.
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import ConfigError

__all__ = ["WORKFLOWS", "render_workflows", "write_workflows"]

_SETUP = """\
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: actions/setup-python@v5
        with:
          python-version: "{python}"
      - name: Install
        run: {install}
"""

_UPLOAD = """\
      - name: Scan artifacts for secrets
        if: always()
        run: assay ci scan results/ci
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: {name}
          path: results/ci
          if-no-files-found: ignore
"""

_JUDGE_ENV = """\
        env:
          ASSAY_CI_TIER: {tier}
          ANTHROPIC_API_KEY: ${{{{ secrets.ASSAY_JUDGE_API_KEY }}}}
"""

PR = """\
name: assay pr
on:
  pull_request:
permissions:
  contents: read
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
{setup}      - name: Plan
        run: assay ci plan --event pr --out results/ci/plan.json
      - name: Evals
        run: assay ci run results/ci/plan.json
{upload}"""

RELEASE = """\
name: assay release
on:
  push:
    tags: ["v*"]
permissions:
  contents: read
jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      run_evals: ${{{{ steps.plan.outputs.run_evals }}}}
      verify: ${{{{ steps.plan.outputs.verify }}}}
      matrix: ${{{{ steps.plan.outputs.matrix }}}}
    steps:
{setup}      - name: Fetch the tag as pushed
        env:
          TAG: ${{{{ github.ref_name }}}}
        # checkout can leave an annotated tag lightweight; its message holds the [full eval]/[skip eval] marker
        run: git fetch --force origin "refs/tags/$TAG:refs/tags/$TAG"
      - name: Plan
        id: plan
        env:
          TAG: ${{{{ github.ref_name }}}}
        run: assay ci plan --event tag --tag "$TAG" --out results/ci/plan.json
  evals:
    needs: plan
    if: needs.plan.outputs.run_evals == 'true'
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix: ${{{{ fromJSON(needs.plan.outputs.matrix) }}}}
    steps:
{setup}      - name: Plan
        env:
          TAG: ${{{{ github.ref_name }}}}
        run: |
          git fetch --force origin "refs/tags/$TAG:refs/tags/$TAG"
          assay ci plan --event tag --tag "$TAG" --out results/ci/plan.json
      - name: Evals
{judge_env}          JOB: ${{{{ matrix.name }}}}
        run: assay ci run results/ci/plan.json --job "$JOB"
{upload_matrix}  verify:
    needs: plan
    if: needs.plan.outputs.verify == 'true'
    runs-on: ubuntu-latest
    permissions:
      contents: read
      actions: read
    steps:
{setup}      - name: Fetch the RC tags' full sweeps
        env:
          GH_TOKEN: ${{{{ github.token }}}}
          TAG: ${{{{ github.ref_name }}}}
        run: |
          mkdir -p results/verify
          for rc in $(git tag -l "$TAG-rc*"); do
            for id in $(gh run list --workflow assay-release.yml --branch "$rc" --json databaseId --jq '.[].databaseId'); do
              gh run download "$id" --dir "results/verify/$id" || echo "run $id has no artifacts"
            done
          done
      - name: Verify
        env:
          TAG: ${{{{ github.ref_name }}}}
        run: assay ci verify --commit "$GITHUB_SHA" --tag "$TAG" --runs results/verify
  report:
    needs: [plan, evals, verify]
    if: failure()
    runs-on: ubuntu-latest
    permissions:
      issues: write
    steps:
      - name: File an issue
        env:
          GH_TOKEN: ${{{{ github.token }}}}
          TAG: ${{{{ github.ref_name }}}}
          RUN_URL: ${{{{ github.server_url }}}}/${{{{ github.repository }}}}/actions/runs/${{{{ github.run_id }}}}
        run: |
          gh issue create --repo "$GITHUB_REPOSITORY" --title "assay: $TAG did not pass" \\
            --body "The release run of $TAG failed: $RUN_URL"
"""

BACKLOG = """\
name: assay backlog
on:
  schedule:
    - cron: "0 6 * * 1"
  workflow_dispatch:
permissions:
  contents: read
  actions: read
jobs:
  backlog:
    runs-on: ubuntu-latest
    steps:
{setup}      - name: Plan
        run: assay ci plan --event schedule --out results/ci/plan.json
      - name: Evals
{judge_env}        run: assay ci run results/ci/plan.json || echo "backlog items fail by design"
      - name: Previous trend
        env:
          GH_TOKEN: ${{{{ github.token }}}}
        run: |
          id=$(gh run list --workflow assay-backlog.yml --status success --limit 1 --json databaseId --jq '.[0].databaseId')
          if [ -n "$id" ]; then gh run download "$id" --name assay-trend --dir previous || echo "no trend yet"; fi
      - name: Trend
        run: |
          prev=()
          if [ -f previous/trend.json ]; then prev=(--previous previous/trend.json); fi
          assay trend results/ci/backlog --metric pass_rate --target 0.8 "${{prev[@]}}" --out results/ci/trend
      - name: Scan artifacts for secrets
        run: assay ci scan results/ci
      - uses: actions/upload-artifact@v4
        with:
          name: assay-trend
          path: results/ci/trend
      - uses: actions/upload-artifact@v4
        with:
          name: assay-backlog
          path: results/ci
"""

DISPATCH = """\
name: assay dispatch
on:
  workflow_dispatch:
    inputs:
      tier:
        description: CI tier to run
        type: choice
        options: [pr, smoke, full, backlog]
        default: smoke
      categories:
        description: Only these categories (comma list)
        type: string
        default: ""
      scenarios:
        description: Only these case ids (comma list)
        type: string
        default: ""
      model:
        description: The model under test (empty = the tier's own)
        type: string
        default: ""
permissions:
  contents: read
jobs:
  dispatch:
    runs-on: ubuntu-latest
    steps:
{setup}      - name: Plan
        env:
          TIER: ${{{{ inputs.tier }}}}
          CATEGORIES: ${{{{ inputs.categories }}}}
          SCENARIOS: ${{{{ inputs.scenarios }}}}
          MODEL: ${{{{ inputs.model }}}}
        run: assay ci plan --event dispatch --tier "$TIER" --categories "$CATEGORIES" --scenarios "$SCENARIOS" --model "$MODEL" --out results/ci/plan.json
      - name: Evals
{judge_env}        run: assay ci run results/ci/plan.json
{upload}"""

WORKFLOWS = ("assay-pr.yml", "assay-release.yml", "assay-backlog.yml", "assay-dispatch.yml")


def render_workflows(install: str = "pip install -e .", python: str = "3.11") -> dict[str, str]:
    """File name -> workflow text."""
    if not install.strip() or "\n" in install:
        raise ConfigError("--install must be one shell command line")
    setup = _SETUP.format(install=install, python=python)
    upload = _UPLOAD.format(name="assay-results-${{ github.run_id }}")
    return {
        "assay-pr.yml": PR.format(setup=setup, upload=upload),
        "assay-release.yml": RELEASE.format(
            setup=setup,
            judge_env=_JUDGE_ENV.format(tier="${{ matrix.tier }}"),
            upload_matrix=_UPLOAD.format(name="assay-${{ matrix.tier }}-${{ matrix.name }}"),
        ),
        "assay-backlog.yml": BACKLOG.format(setup=setup, judge_env=_JUDGE_ENV.format(tier="backlog")),
        "assay-dispatch.yml": DISPATCH.format(
            setup=setup, upload=upload, judge_env=_JUDGE_ENV.format(tier="${{ inputs.tier }}")
        ),
    }


def write_workflows(directory: Path, *, install: str, python: str, force: bool = False) -> list[Path]:
    """Write the four workflows into ``directory``; an existing one is kept unless ``force``."""
    texts = render_workflows(install, python)
    existing = [directory / n for n in texts if (directory / n).exists()]
    if existing and not force:
        raise ConfigError(f"{existing[0]} exists; pass --force to overwrite", path=f"--dir {directory}")
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        (directory / name).write_text(text, encoding="utf-8")
        written.append(directory / name)
    return written
