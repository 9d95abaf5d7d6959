#!/usr/bin/env bash
# Run one coding agent once against one fixture, with the mock model server as
# its only endpoint, and collect what it sent.
#
#   run_agent.sh AGENT FIXTURE [TAG]
#
# AGENT    codex | claude | gemini | copilot | cline
# FIXTURE  a directory name under fixtures/ (see make_fixtures.py)
# TAG      optional suffix for the capture directory
#
# Needs the mock server running (MOCK_PORT, default 18080): see run_all.sh.
# Layout of one run ($W = $OBS_TMP/<agent>-<fixture>, wiped first):
#   $W/ws      copy of fixtures/<fixture>/ws   ($W/ws/repo is a fresh git repo)
#   $W/home    fresh $HOME (fixture home/ + agent config seeded here)
# Captures go to captures/raw/<agent>/<fixture>[-TAG]/ (one JSON per request)
# plus agent.stdout / agent.stderr / run.json there.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
AGENT="$1"; FIX="$2"; TAG="${3:-}"
PORT="${MOCK_PORT:-18080}"
OBS_TMP="${OBS_TMP:-/tmp/ctx-observe}"
AGENTS_DIR="${AGENTS_DIR:-$HERE/agents}"
TIMEOUT="${AGENT_TIMEOUT:-180}"
FDIR="$HERE/fixtures/$FIX"
[ -d "$FDIR" ] || { echo "no fixture $FIX" >&2; exit 2; }

NAME="$FIX${TAG:+-$TAG}"
W="$OBS_TMP/$AGENT-$NAME"
CAP="$HERE/captures/raw/$AGENT/$NAME"
rm -rf "$W" "$CAP"
mkdir -p "$W/home" "$CAP"
cp -a "$FDIR/ws" "$W/ws"
[ -d "$FDIR/home" ] && cp -a "$FDIR/home/." "$W/home/"
WS="$W/ws"; H="$W/home"

meta() { python3 -c "import json,sys; m=json.load(open('$FDIR/meta.json')); v=m.get('$1'); print('' if v is None else (v if isinstance(v,str) else json.dumps(v)))"; }
CWD_REL="$(meta cwd)"; PROMPT="$(meta prompt)"; GIT="$(meta git)"

# placeholder substitution (__WS__, __HOME__) in copied files and the prompt
grep -rlZ -e __WS__ -e __HOME__ "$WS" "$H" 2>/dev/null | xargs -0r sed -i "s#__WS__#$WS#g; s#__HOME__#$H#g" || true
PROMPT="${PROMPT//__WS__/$WS}"; PROMPT="${PROMPT//__HOME__/$H}"

if [ "$GIT" != "false" ]; then
  (cd "$WS/repo" && git init -q -b main && git add -A &&
   git -c user.email=obs@example.invalid -c user.name=obs commit -qm fixture)
fi
mkdir -p "$WS/$CWD_REL"

BASE_ENV=(PATH="/usr/local/bin:/usr/bin:/bin" HOME="$H" TERM=dumb LANG=C.UTF-8
          XDG_CONFIG_HOME="$H/.config" XDG_CACHE_HOME="$H/.cache" XDG_DATA_HOME="$H/.local/share"
          NO_UPDATE_NOTIFIER=1 NO_COLOR=1 CI=1)

case "$AGENT" in
codex)
  mkdir -p "$H/.codex"
  cat > "$H/.codex/config.toml" <<EOF
model = "mock-model"
model_provider = "mock"
check_for_update_on_startup = false
$(meta codex_config)
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:$PORT/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[feedback]
enabled = false
EOF
  AENV=(CODEX_HOME="$H/.codex" MOCK_API_KEY=dummy)
  CMD=("$AGENTS_DIR/codex/node_modules/.bin/codex" exec)
  [ "$GIT" = "false" ] && CMD+=(--skip-git-repo-check)
  CMD+=("$PROMPT")
  ;;
claude)
  AENV=(ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=dummy
        DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_BUG_COMMAND=1)
  CMD=("$AGENTS_DIR/claude/node_modules/@anthropic-ai/claude-code-linux-x64/claude" -p "$PROMPT")
  ;;
gemini)
  mkdir -p "$H/.gemini"
  python3 - "$H/.gemini/settings.json" "$(meta gemini_settings)" <<'EOF'
import json, sys
path, extra = sys.argv[1], sys.argv[2]
s = {"security": {"auth": {"selectedType": "gemini-api-key"}},
     "privacy": {"usageStatisticsEnabled": False},
     "telemetry": {"enabled": False},
     "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
     "ide": {"enabled": False}}
def merge(a, b):
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(a.get(k), dict): merge(a[k], v)
        else: a[k] = v
merge(s, json.loads(extra) if extra else {})
json.dump(s, open(path, "w"), indent=1)
EOF
  AENV=(GEMINI_API_KEY=dummy GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT"
        GEMINI_CLI_TRUST_WORKSPACE=true)
  # an explicit model skips the "auto" router's extra classifier calls
  CMD=("$AGENTS_DIR/gemini/node_modules/.bin/gemini" -m gemini-2.5-pro -p "$PROMPT")
  ;;
copilot|cline)
  # shellcheck source=/dev/null
  source "$HERE/agent_$AGENT.sh"   # defines AENV and CMD (optional agents)
  ;;
*) echo "unknown agent $AGENT" >&2; exit 2 ;;
esac

curl -s -o /dev/null -XPOST "http://127.0.0.1:$PORT/__mock/logdir" -d "{\"dir\": \"$CAP\"}"
set +e
# EXTRA_ENV="A=1 B=2" adds variables for one run (e.g. COPILOT_PROVIDER_MAX_PROMPT_TOKENS)
read -r -a XENV <<< "${EXTRA_ENV:-}"
(cd "$WS/$CWD_REL" && env -i "${BASE_ENV[@]}" "${AENV[@]}" "${XENV[@]}" timeout "$TIMEOUT" "${CMD[@]}" \
   </dev/null >"$CAP/agent.stdout" 2>"$CAP/agent.stderr")
RC=$?
set -e
if declare -F agent_post >/dev/null; then agent_post; fi
curl -s -o /dev/null -XPOST "http://127.0.0.1:$PORT/__mock/logdir" -d "{\"dir\": \"$HERE/captures/raw/_unassigned\"}"
python3 -c 'import json,sys; k=["agent","fixture","tag","ws","home","cwd","prompt","exit_code"]; d=dict(zip(k,sys.argv[2:])); d["exit_code"]=int(d["exit_code"]); json.dump(d,open(sys.argv[1],"w"),indent=1)' \
  "$CAP/run.json" "$AGENT" "$FIX" "$TAG" "$WS" "$H" "$WS/$CWD_REL" "$PROMPT" "$RC"
echo "$AGENT $NAME rc=$RC requests=$(ls "$CAP" | grep -c '^[0-9]' || true) -> $CAP"
