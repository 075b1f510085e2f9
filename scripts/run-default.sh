#!/usr/bin/env bash
# The main job on the built-in default (make run).
set -euo pipefail
bin=${1:-build/bin/clustersweep}
cd "$(dirname "$0")/.."
"$bin" estimate examples/estimate-gpt3-175b.toml
