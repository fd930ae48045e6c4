#!/usr/bin/env bash
# The dev stack answered by a person (docs/MODEL-BY-HAND.md), all in one network namespace:
# the by-hand model server, `steward dev` pointed at it, and the tabs driver with the named tabs.
#   ops/by-hand-stack.sh [--room ROOM] [--dir DIR] [--timeout S] [TAB[:WxH]]...
# Requests park under DIR (default .data/by-hand/<room>); the tabs answer on DIR/tabs.sock;
# logs go to DIR/*.log. Ctrl-C stops all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
room=demo dir="" timeout=1800 tabs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --room) room="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    *) tabs+=("$1"); shift ;;
  esac
done
dir="${dir:-.data/by-hand/$room}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
if [[ "${STEWARD_IN_NETNS:-}" != "1" ]]; then
  exec ./ops/netns-run.sh "$0" --room "$room" --dir "$dir" --timeout "$timeout" "${tabs[@]}"
fi
export PATH="$PWD/.tools/node/bin:$HOME/.local/bin:$PATH"
[[ -f client-bridge/demo/dist/index.html ]] || npm --prefix client-bridge run build --silent
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait; }
trap stop EXIT INT TERM
uv run --frozen steward by-hand serve --dir "$dir" --port 8765 --timeout "$timeout" \
  >"$dir/model.log" 2>&1 &
pids+=($!)
# A person answers in minutes: the run watchdog and the session cap wait as long as the server.
# One model name per role, so each parked folder says which role asks (NNN-drone, ...); a
# STEWARD_MODEL given (e.g. replay:FILE) serves every role.
given="${STEWARD_MODEL:-}"
ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=by-hand \
  STEWARD_MODEL="${given:-anthropic:by-hand}" \
  STEWARD_MODEL_ONE_SHOT="${STEWARD_MODEL_ONE_SHOT:-${given:-anthropic:one-shot}}" \
  STEWARD_MODEL_ORCHESTRATOR="${STEWARD_MODEL_ORCHESTRATOR:-${given:-anthropic:orchestrator}}" \
  STEWARD_MODEL_DUO="${STEWARD_MODEL_DUO:-${given:-anthropic:duo}}" \
  STEWARD_MODEL_DRONE="${STEWARD_MODEL_DRONE:-${given:-anthropic:drone}}" \
  STEWARD_WATCHDOG_S="$((timeout + 60))" STEWARD_SESSION_MAX_S="$((timeout * 4))" \
  uv run --frozen steward dev --room "$room" >"$dir/steward.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
  curl -sf http://127.0.0.1:8787/healthz >/dev/null 2>&1 && break
  sleep 1
done
curl -sf http://127.0.0.1:8787/healthz >/dev/null || { echo "steward dev did not come up: see $dir/steward.log" >&2; exit 1; }
args=()
for t in "${tabs[@]}"; do args+=(--tab "$t"); done
node client-bridge/bench/tabs.mjs serve --page http://127.0.0.1:8787 --room "$room" \
  --socket "$dir/tabs.sock" --out "$dir/shots" "${args[@]}" >"$dir/tabs.log" 2>&1 &
pids+=($!)
echo "by-hand stack: room $room; requests park in $dir; tabs: STEWARD_TABS_SOCKET=$dir/tabs.sock"
echo "logs: $dir/model.log $dir/steward.log $dir/tabs.log. Ctrl-C stops everything."
wait -n "${pids[@]}"
echo "a part of the stack stopped: see the logs in $dir" >&2
