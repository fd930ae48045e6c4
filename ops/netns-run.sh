#!/usr/bin/env bash
# Runs a command inside a private network namespace that has only loopback plus a veth pair
# of its own (10.213.0.1/32, no route anywhere else), so WebRTC test traffic cannot leave
# the machine. libwebrtc (Python SDK, Chromium) ignores loopback interfaces when gathering
# ICE candidates, so it needs one non-loopback address; the veth pair provides it.
set -euo pipefail
if [[ "${STEWARD_IN_NETNS:-}" == "1" ]]; then exec "$@"; fi
if ! command -v unshare >/dev/null 2>&1 || ! unshare -n true 2>/dev/null; then
  if [[ "${STEWARD_ALLOW_HOST_NET:-}" == "1" ]]; then
    echo "warning: cannot create a network namespace; running on the host network" >&2
    exec "$@"
  fi
  echo "error: tests need 'unshare -n' (root or CAP_SYS_ADMIN) to isolate WebRTC traffic;" >&2
  echo "       set STEWARD_ALLOW_HOST_NET=1 to run on the host network instead." >&2
  exit 2
fi
exec unshare -n env STEWARD_IN_NETNS=1 bash -c '
  set -e
  ip link set lo up
  ip link add stw0 type veth peer name stw1
  ip addr add 10.213.0.1/32 dev stw0
  ip link set stw0 up
  ip link set stw1 up
  exec "$@"
' netns-run "$@"
