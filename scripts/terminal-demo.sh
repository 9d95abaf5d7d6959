#!/usr/bin/env bash
# The terminal experience of ctx, checked in a real terminal: runs `ctx check` on the broken
# example and `ctx assemble` on a large generated tree inside tmux, and prints the captured
# panes with their colours (`tmux capture-pane -p -e`).
#
# Usage: scripts/terminal-demo.sh [FILES]   (FILES: size of the generated tree, default 20000)
# Needs tmux. Uses $CARGO_TARGET_DIR if set. Leaves nothing behind but its temporary directory,
# which it removes.
set -euo pipefail

files="${1:-20000}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
command -v tmux >/dev/null || { echo "terminal-demo: tmux is not installed" >&2; exit 2; }

cargo build -q -p ctx-cli
target="${CARGO_TARGET_DIR:-$repo/target}"
ctx="$target/debug/ctx"
[ -x "$ctx" ] || { echo "terminal-demo: no binary at $ctx" >&2; exit 2; }

work="$(mktemp -d)"
session="ctx-demo-$$"
cleanup() {
    tmux kill-session -t "$session" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A large tree: FILES small source files in 100 directories, and a rule that includes them all.
python3 - "$work/tree" "$files" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "src", f"mod{i % 100:02}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"file{i}.rs"), "w") as f:
        f.write(f"// file {i}\npub fn f{i}() -> u32 {{ {i} }}\n")
with open(os.path.join(root, "all.md"), "w") as f:
    f.write("# Everything\n\n@[src/**/*.rs]\n")
EOF

tmux new-session -d -s "$session" -x 110 -y 45 -c "$repo" "bash --norc --noprofile"
tmux set-option -t "$session" status off >/dev/null
type_line() {
    tmux send-keys -t "$session" "$1" Enter
}
capture() {
    echo "---------------------------------------------------------------- $1"
    tmux capture-pane -t "$session" -p -e | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}
wait_prompt() {
    # Waits until the shell prints the marker after the command.
    for _ in $(seq 1 600); do
        if tmux capture-pane -t "$session" -p | grep -q "^DONE $1"; then return 0; fi
        sleep 0.1
    done
    echo "terminal-demo: timed out waiting for $1" >&2
}

type_line "export PS1='$ ' TERM=xterm-256color; unset NO_COLOR; clear"
sleep 0.3
type_line "$ctx check examples/broken/rules.md; echo DONE check \$?"
wait_prompt check
capture "ctx check examples/broken/rules.md (a terminal: source line, caret, colour)"

type_line "clear"
sleep 0.2
type_line "$ctx --root $work/tree assemble all.md --max-files 0 --max-output-bytes 0 --tokens > $work/out.txt; echo DONE assemble \$?"
# Poll until the spinner shows (it appears after 200 ms of work), or the command ends.
for _ in $(seq 1 100); do
    sleep 0.1
    pane="$(tmux capture-pane -t "$session" -p)"
    if grep -q '^DONE assemble' <<<"$pane"; then break; fi
    if grep -q 'assembling all.md' <<<"$pane"; then sleep 0.3; break; fi
done
capture "while ctx assemble runs on $files files (standard output is a file, standard error the terminal)"
wait_prompt assemble
capture "after ctx assemble"
echo "---------------------------------------------------------------- output"
wc -c "$work/out.txt" | awk '{print $1 " bytes of assembled output"}'
