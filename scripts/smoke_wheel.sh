#!/usr/bin/env bash
# Builds the wheel, installs it in a fresh virtual environment and uses it from another folder,
# as a user who never saw the checkout would: examples, validate, run, replay, and the
# workbench's first screen in tmux.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'tmux kill-session -t harness-smoke 2>/dev/null || true; rm -rf "$work"' EXIT

python3 -m pip wheel -q --no-deps -w "$work/dist" "$repo"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$work"/dist/harness_tui-*.whl
bin="$work/venv/bin/harness-tui"

cd "$work"
export HARNESS_TUI_CONFIG="" HARNESS_TUI_STATE=""
"$bin" -V
"$bin" examples demo
"$bin" validate demo/*.yaml
"$bin" run demo/user_profile.yaml --store "$work/runs.sqlite3" --export run.json -q
"$bin" replay run.json > /dev/null
echo "replay: ok"

tmux new-session -d -s harness-smoke -x 100 -y 30 "$bin demo/user_profile.yaml --no-store"
for _ in $(seq 1 100); do
  screen="$(tmux capture-pane -p -t harness-smoke 2>/dev/null || true)"
  if grep -q "compose_response" <<<"$screen"; then
    echo "workbench: first screen shows the plan"
    exit 0
  fi
  sleep 0.2
done
echo "workbench: no first screen after 20 s; the pane shows:" >&2
printf '%s\n' "$screen" >&2
exit 1
