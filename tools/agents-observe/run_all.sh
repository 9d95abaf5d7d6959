#!/usr/bin/env bash
# Start the mock server, run every fixture for the given agents, extract, stop.
#   run_all.sh [AGENT...]        default: codex gemini claude
# Env: MOCK_PORT (18080), ONLY="fixture1 fixture2" to restrict fixtures.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
PORT="${MOCK_PORT:-18080}"
AGENTS=("$@"); [ ${#AGENTS[@]} -eq 0 ] && AGENTS=(codex gemini claude)

python3 make_fixtures.py
mkdir -p logs
python3 mock_server.py --port "$PORT" --logdir captures/raw/_unassigned >logs/mock.log 2>&1 &
MOCK_PID=$!
trap 'kill $MOCK_PID 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/models" && break; sleep 0.1; done

for agent in "${AGENTS[@]}"; do
  for fx in fixtures/*/; do
    fx="$(basename "$fx")"
    [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $fx "* ]] && continue
    python3 -c "import json,sys; sys.exit(0 if sys.argv[2] in json.load(open(sys.argv[1]))['agents'] else 1)" \
      "fixtures/$fx/meta.json" "$agent" || continue
    MOCK_PORT="$PORT" ./run_agent.sh "$agent" "$fx" || echo "FAILED: $agent $fx"
    python3 extract.py "$agent/$fx" >/dev/null
  done
done
python3 extract.py >logs/summary.txt
cat logs/summary.txt
