# Sourced by run_agent.sh for AGENT=cline (Cline CLI, OpenAI-compatible provider).
# Uses: H (fresh HOME), WS, CWD_REL, PORT, PROMPT, AGENTS_DIR, BASE_ENV.  Defines AENV, CMD, agent_post.
CLINE_BIN="$AGENTS_DIR/cline/node_modules/.bin/cline"
AENV=()
# one-time provider setup, written to $H/.cline/data/settings/providers.json
env -i "${BASE_ENV[@]}" "$CLINE_BIN" auth -p openai -k dummy -m gpt-4o \
    -b "http://127.0.0.1:$PORT/v1" </dev/null >/dev/null 2>&1
CMD=("$CLINE_BIN" --auto-approve true -t 120 "$PROMPT")
agent_post() {
  # cline leaves a detached "hub daemon" (started with --cwd under this run's $WS); it
  # can appear a moment after the CLI exits, so look a few times and stop only that one
  local pid i
  for i in 1 2 3 4 5; do
    sleep 1
    for pid in $(ps -eo pid=,args= | awk -v ws="--cwd $WS/" 'index($0, ws) && /--cline-hub-daemon/ {print $1}'); do
      kill "$pid" 2>/dev/null || true
    done
  done
}
