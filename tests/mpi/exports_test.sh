#!/bin/sh
# Every MPI 3.1 function is exported twice: PMPI_<name>, and MPI_<name> as
# its weak alias (the profiling interface).
#   exports_test.sh LIBMPI FUNCTIONS_TXT
set -u
lib=$1 list=$2
symbols=$(nm -D --defined-only "$lib") || { echo "exports_test: nm cannot read $lib"; exit 1; }
missing=0
while read -r name; do
  echo "$symbols" | grep -q " T P$name\$" || { echo "exports_test: P$name is not exported as a function"; missing=1; }
  echo "$symbols" | grep -q " W $name\$" || { echo "exports_test: $name is not exported as a weak alias"; missing=1; }
done < "$list"
[ "$(wc -l < "$list")" -gt 350 ] || { echo "exports_test: $list lists only $(wc -l < "$list") functions"; exit 1; }
exit $missing
