#!/bin/sh
# A program calling a function HComm's MPI does not implement must stop,
# every rank, with a message naming the function.
#   unsupported_test.sh MPIEXEC PROGRAM
set -u
mpiexec=$1 program=$2
out=$("$mpiexec" -n 2 "$program" 2>&1)
rc=$?
fail() { echo "unsupported_test: $1"; echo "--- output (exit $rc):"; echo "$out"; exit 1; }
[ $rc -ne 0 ] || fail "the job exited 0"
echo "$out" | grep -q "MPI_Cart_create is not implemented" || fail "no message names MPI_Cart_create"
echo "$out" | grep -q "returned instead of stopping" && fail "MPI_Cart_create returned"
exit 0
