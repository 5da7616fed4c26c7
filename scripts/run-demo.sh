#!/usr/bin/env bash
# The main job: a 4-rank allreduce sweep, 8 B to 64 MiB, on the built-in defaults.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
./build/bin/hcomm-info | sed -n '1,12p'
./build/bin/hcomm-run -n 4 ./build/bin/hcomm-perf -c allreduce -b 8 -e 64M -f 2
