#!/usr/bin/env bash
# Builds with warnings as errors under CI and runs every test.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd build
ctest --output-on-failure --timeout 900 "$@"
