#!/usr/bin/env bash
# Builds HComm with sanitizers and runs its tests under them.
#
#   bash scripts/run-sanitized.sh asan [ctest arguments]   # AddressSanitizer + UndefinedBehaviorSanitizer, build-asan/
#   bash scripts/run-sanitized.sh tsan [ctest arguments]   # ThreadSanitizer, build-tsan/
#
# Without ctest arguments every test runs; `-L unit`, `-R 'collectives\.shm'`
# and the like pick a part. The options below are what the suite needs; the
# tests' own child processes (hcomm-run's ranks) inherit them.
set -euo pipefail
kind=${1:-}
case "$kind" in
  asan | tsan) shift ;;
  *)
    echo "usage: bash scripts/run-sanitized.sh asan|tsan [ctest arguments]" >&2
    exit 2
    ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HCOMM_PRESET=$kind source "$here/scripts/setup.sh"
cd "$here/build-$kind"

supp="$here/tests/sanitizers"
# detect_leaks=0: LeakSanitizer reports, at exit, memory that plugins and
# third-party libraries (UCX, libfabric, hwloc) keep for the process's life.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
# Every finding fails its test: the build recovers from UB by default.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
# UCX's memory hooks (libucm) patch madvise, which glibc calls on a thread's
# stack as the thread exits, after ThreadSanitizer let go of it: a crash in
# every process that loads UCX (the ucx transport, Open MPI's mpirun).
export UCX_MEM_MMAP_HOOK_MODE=none
ctest --output-on-failure --timeout 1800 "$@"
