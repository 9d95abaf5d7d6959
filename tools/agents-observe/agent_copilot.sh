# Sourced by run_agent.sh for AGENT=copilot (GitHub Copilot CLI, BYOK offline mode).
# Uses: H (fresh HOME), PORT, PROMPT, AGENTS_DIR.  Defines AENV and CMD.
AENV=(COPILOT_HOME="$H/.copilot" COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false
      COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$PORT/v1" COPILOT_PROVIDER_TYPE=openai
      COPILOT_PROVIDER_API_KEY=dummy COPILOT_PROVIDER_WIRE_API="${COPILOT_WIRE_API:-completions}"
      COPILOT_MODEL=gpt-5)
CMD=("$AGENTS_DIR/copilot/node_modules/.bin/copilot" -p "$PROMPT" --allow-all-tools
     --disable-client-telemetry --no-auto-update --trust-folder -s)
