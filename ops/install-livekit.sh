#!/usr/bin/env bash
# Installs livekit-server v1.13.5 into .tools/bin (git-ignored); reuses it when already there.
set -euo pipefail
VERSION="v1.13.5"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN_DIR="$ROOT/.tools/bin"
BIN="$BIN_DIR/livekit-server"
STAMP="$BIN_DIR/livekit-server.version"

if [[ -x "$BIN" && -f "$STAMP" && "$(cat "$STAMP")" == "$VERSION" ]]; then
  echo "livekit-server $VERSION already installed at $BIN"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  [[ -x /usr/local/go/bin/go ]] && export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  cat >&2 <<MSG
error: Go is not installed, so livekit-server $VERSION cannot be built here.
Other ways to get it:
  - with Docker: docker compose up livekit   (uses livekit/livekit-server:$VERSION)
  - download the release binary for your platform from
    https://github.com/livekit/livekit-server/releases/tag/$VERSION
    and place it at $BIN, then: echo $VERSION > $STAMP
MSG
  exit 1
fi

mkdir -p "$BIN_DIR"
echo "building livekit-server $VERSION with $(go version) (a few minutes the first time)..."
GOBIN="$BIN_DIR" GOFLAGS="-trimpath" go install "github.com/livekit/livekit-server/cmd/server@$VERSION"
mv -f "$BIN_DIR/server" "$BIN"
echo "$VERSION" > "$STAMP"
echo "installed $BIN"
