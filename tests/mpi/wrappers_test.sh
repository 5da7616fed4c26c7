#!/bin/sh
# mpicc / mpicxx: -show and --showme print the command, a C++ program
# builds with mpicxx and runs under mpirun -np, from the build tree and from
# an installation (cmake --install of BUILDDIR); mpiexec's bad command lines
# get exit 2 and a message.
#   wrappers_test.sh BINDIR WORKDIR BUILDDIR
set -u
bin=$1 work=$2 build=$3
mkdir -p "$work"
fail() { echo "wrappers_test: $*"; exit 1; }

show=$("$bin/mpicc" -show hello.c -o hello) || fail "mpicc -show failed"
for part in "-I" "hello.c" "-lmpi" "-Wl,-rpath," "-o hello"; do
  case "$show" in *"$part"*) ;; *) fail "mpicc -show lacks '$part': $show" ;; esac
done
compile=$("$bin/mpicc" --showme -c hello.c) || fail "mpicc --showme -c failed"
case "$compile" in *-lmpi*) fail "mpicc --showme -c links: $compile" ;; esac
"$bin/mpicxx" -showme | grep -q -- "-lmpi" || fail "mpicxx -showme lacks -lmpi"

cat > "$work/hello.cpp" <<'CXX'
#include <mpi.h>
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> v(5, rank + 1.0);
  MPI_Allreduce(MPI_IN_PLACE, v.data(), 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (double x : v)
    if (x != size * (size + 1) / 2.0) {
      std::fprintf(stderr, "rank %d: %g\n", rank, x);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  MPI_Finalize();
}
CXX
"$bin/mpicxx" -Wall -Werror "$work/hello.cpp" -o "$work/hello_cxx" || fail "mpicxx could not build a C++ program"
"$bin/mpirun" -np 3 "$work/hello_cxx" || fail "the C++ program failed under mpirun -np 3"

expect_usage() {
  out=$("$bin/mpiexec" "$@" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || fail "mpiexec $* exited $rc, expected 2: $out"
  echo "$out" | grep -q "$want" || fail "mpiexec $* does not say '$want': $out"
}
# Installed: the wrappers name the installed header and library, wherever the prefix is.
prefix="$work/prefix"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 || fail "cmake --install failed: $(tail -5 "$work/install.log")"
[ -f "$prefix/include/hcomm-mpi/mpi.h" ] || fail "mpi.h is not installed into include/hcomm-mpi"
[ -e "$prefix/lib/libmpich.so.12" ] || fail "libmpich.so.12 is not installed"
show=$("$prefix/bin/mpicc" -show x.c)
case "$show" in *"$prefix/include/hcomm-mpi"*"$prefix/lib"*) ;; *) fail "installed mpicc -show: $show" ;; esac
"$prefix/bin/mpicxx" "$work/hello.cpp" -o "$work/hello_installed" || fail "the installed mpicxx could not build"
"$prefix/bin/mpiexec" -n 2 "$work/hello_installed" || fail "the installed build failed under the installed mpiexec"

want="positive integer" expect_usage -n many "$work/hello_cxx"
want="no program" expect_usage -n 2
want="not supported" expect_usage --host a,b -n 2 "$work/hello_cxx"
want="needs a number" expect_usage -n
exit 0
