#!/usr/bin/env bash
# Install the agent CLIs this harness was written against, each in its own
# node_modules under agents/<name>/ (≈1.5 GB in total; delete agents/ when done).
#   install_agents.sh [codex|gemini|claude|copilot|cline ...]   (default: all)
# Versions are pinned to the ones FINDINGS.md describes; override with e.g.
#   CODEX_VERSION=latest install_agents.sh codex
# npm 11 does not run install scripts by default; none is needed: run_agent.sh
# calls each package's platform binary / bin entry directly.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
declare -A PKG=(
  [codex]="@openai/codex@${CODEX_VERSION:-0.171.0}"
  [gemini]="@google/gemini-cli@${GEMINI_VERSION:-0.61.0}"
  [claude]="@anthropic-ai/claude-code@${CLAUDE_VERSION:-2.1.332}"
  [copilot]="@github/copilot@${COPILOT_VERSION:-1.0.102}"
  [cline]="cline@${CLINE_VERSION:-3.0.65}"
)
AGENTS=("$@"); [ ${#AGENTS[@]} -eq 0 ] && AGENTS=(codex gemini claude copilot cline)
for a in "${AGENTS[@]}"; do
  mkdir -p "$HERE/agents/$a"
  (cd "$HERE/agents/$a" && npm install --no-audit --no-fund --no-save "${PKG[$a]}")
done
