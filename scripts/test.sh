#!/usr/bin/env bash
# Set up from nothing (venv, packages, models; as root also Debian's Chromium for the inspector test,
# PostgreSQL for the store tests and Tesseract's English and Russian data for OCR), check afm_local/, tests/ and scripts/ with ruff (lint, import order, format) and afm_local/ with mypy (the
# settings are in pyproject.toml; a finding fails the run), then run the whole test suite on one thread
# per model. The tests start their own PostgreSQL cluster on a private socket and port, and stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev

apt_updated=""
install_debian() {  # install_debian WHAT PACKAGE...: a missing test dependency, from the distribution
  local what=$1
  shift
  if [ "$(id -u)" != 0 ]; then
    echo "warning: $what is not installed; its tests will be skipped" >&2
    return
  fi
  if [ -z "$apt_updated" ]; then
    apt-get update -qq || true
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null \
    || echo "warning: could not install $what; its tests will be skipped" >&2
}

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  install_debian chromium chromium chromium-driver
fi
if ! command -v strace >/dev/null; then
  install_debian strace strace  # the no-outbound test traces the CLI and a server's network calls
fi
tessdata=${TESSDATA_PREFIX:-/usr/share/tesseract-ocr/5/tessdata}
if [ ! -f "$tessdata/eng.traineddata" ] || [ ! -f "$tessdata/rus.traineddata" ]; then
  install_debian "Tesseract OCR data (English, Russian)" tesseract-ocr-eng tesseract-ocr-rus  # 7.8 MB, no binary
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  # Only the server binaries are wanted: no system cluster created (or started) by the package.
  if [ "$(id -u)" = 0 ]; then
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/afm-local-tests.conf
  fi
  install_debian PostgreSQL postgresql
fi

.venv/bin/ruff check afm_local tests scripts
.venv/bin/ruff format --check afm_local tests scripts
.venv/bin/mypy

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 AFM_THREADS=1 TOKENIZERS_PARALLELISM=false
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/python -m pytest "$@"
