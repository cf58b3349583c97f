#!/usr/bin/env bash
# Set up from nothing (venv, packages, models, a headless Chromium for the inspector test) and run
# the whole test suite on one thread per model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null) \
      || echo "warning: could not install chromium; the browser test will be skipped" >&2
  else
    echo "warning: chromium is not installed; the browser test will be skipped" >&2
  fi
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 AFM_THREADS=1 TOKENIZERS_PARALLELISM=false
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python -m pytest "$@"
