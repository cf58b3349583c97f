#!/usr/bin/env bash
# Set up what the default path uses (the runtime and its models: no llama.cpp, no GGUF model), then pack the
# bundled peanut-allergy trip into 500 tokens with the structured memory: the allergy from turn 2 reaches
# the model first and verbatim.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/afm-local pack examples/peanut_trip.json --budget 500 --render structured "$@"
