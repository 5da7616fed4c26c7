#!/usr/bin/env bash
# Tests of the hcomm-run launcher, one case per call:
#   hcomm_run_test.sh <path to hcomm-run> <case>
# Every case is bounded in time: ranks that should be stopped sleep at most
# 60 s, and each case checks that the launcher returned long before that.
# The rank scripts are in single quotes on purpose: the ranks expand them.
# shellcheck disable=SC2016
set -u

RUN=$1
CASE=$2
# shellcheck source=case_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/case_common.sh"
DECOY=""  # a shared-memory file of the test's own, removed however the test ends
trap 'rm -rf "$WORK" $DECOY' EXIT

# Runs hcomm-run with the given arguments; sets RC and ELAPSED_MS.
launch() {
  local start end
  start=$(date +%s%N)
  capture "$RUN" "$@"
  end=$(date +%s%N)
  ELAPSED_MS=$(((end - start) / 1000000))
}

expect_faster_than() { [ "$ELAPSED_MS" -lt "$1" ] || fail "took $ELAPSED_MS ms, expected under $1 ms"; }
expect_stderr_line() { grep -qxF -- "$1" "$WORK/err" || fail "stderr lacks the line: $1"; }

# A process counts as alive unless it is gone or a zombie.
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null; }

expect_all_dead() {
  local f pid
  for f in "$@"; do
    [ -f "$f" ] || fail "missing pid file $f"
    pid=$(cat "$f")
    alive "$pid" && fail "process $pid ($(basename "$f")) is still running"
  done
  return 0
}

# Waits (at most 10 s) until `count` files in $WORK match the pattern.
wait_for_files() {
  local pattern=$1 count=$2
  for _ in $(seq 100); do
    [ "$(find "$WORK" -maxdepth 1 -name "$pattern" | wc -l)" -ge "$count" ] && return 0
    sleep 0.1
  done
  fail "timed out waiting for $count files $pattern"
}

case_env() {
  local i
  for _ in 1 2; do
    HCOMM_RANK=99 HCOMM_SECRET=stale HCOMM_DEBUG=INFO launch -n 3 sh -c 'env > "$0/env.$HCOMM_RANK"' "$WORK/"
    expect_rc 0
    for i in 0 1 2; do
      local f="$WORK/env.$i"
      [ -f "$f" ] || fail "rank $i did not run"
      [ "$(grep -c '^HCOMM_RANK=' "$f")" -eq 1 ] || fail "rank $i: HCOMM_RANK set more than once"
      grep -qx "HCOMM_RANK=$i" "$f" || fail "rank $i: wrong HCOMM_RANK"
      grep -qx "HCOMM_SIZE=3" "$f" || fail "rank $i: wrong HCOMM_SIZE"
      grep -qx "HCOMM_LOCAL_RANK=$i" "$f" || fail "rank $i: wrong HCOMM_LOCAL_RANK"
      grep -qx "HCOMM_LOCAL_SIZE=3" "$f" || fail "rank $i: wrong HCOMM_LOCAL_SIZE"
      grep -qx "HCOMM_DEBUG=INFO" "$f" || fail "rank $i: the caller's HCOMM_DEBUG was not passed on"
      grep -qxE "HCOMM_ROOT=127\.0\.0\.1:[0-9]{1,5}" "$f" || fail "rank $i: bad HCOMM_ROOT"
      grep -qxE "HCOMM_SECRET=[0-9a-f]{32}" "$f" || fail "rank $i: bad HCOMM_SECRET"
    done
    local port
    port=$(sed -n 's/^HCOMM_ROOT=127\.0\.0\.1://p' "$WORK/env.0")
    if [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then fail "port $port out of range"; fi
    [ "$(grep -h '^HCOMM_ROOT=' "$WORK"/env.* | sort -u | wc -l)" -eq 1 ] || fail "ranks got different HCOMM_ROOT"
    [ "$(grep -h '^HCOMM_SECRET=' "$WORK"/env.* | sort -u | wc -l)" -eq 1 ] || fail "ranks got different HCOMM_SECRET"
    grep -h '^HCOMM_SECRET=' "$WORK/env.0" >>"$WORK/secrets"
  done
  [ "$(sort -u "$WORK/secrets" | wc -l)" -eq 2 ] || fail "two jobs got the same secret"
}

case_success() {
  launch -n 4 true
  expect_rc 0
  [ -s "$WORK/err" ] && fail "a successful job printed to stderr"
  launch -n 1 -- sh -c 'exit 0'
  expect_rc 0
}

# Rank 2 fails; the others and their children must be stopped at once.
case_failure() {
  launch -n 4 sh -c '
    echo $$ > "$0/rank.$HCOMM_RANK"
    sleep 60 & echo $! > "$0/child.$HCOMM_RANK"
    if [ "$HCOMM_RANK" = 2 ]; then sleep 0.3; exit 3; fi
    wait' "$WORK"
  expect_rc 3
  expect_faster_than 10000
  expect_stderr_line "hcomm-run: rank 2 (pid $(cat "$WORK/rank.2")) exited with code 3"
  [ "$(grep -c '^hcomm-run:' "$WORK/err")" -eq 1 ] || fail "expected exactly one hcomm-run line"
  expect_all_dead "$WORK"/rank.* "$WORK"/child.*
}

# A rank killed by a signal gives 128+signal; a rank that ignores SIGTERM is
# killed 2 s later.
case_signal() {
  launch -n 3 sh -c '
    echo $$ > "$0/rank.$HCOMM_RANK"
    case "$HCOMM_RANK" in
      0) trap "" TERM; sleep 60 ;;
      1) sleep 0.5; kill -9 $$ ;;
      *) sleep 60 ;;
    esac' "$WORK"
  expect_rc 137
  expect_stderr_line "hcomm-run: rank 1 (pid $(cat "$WORK/rank.1")) killed by signal 9 (Killed)"
  [ "$ELAPSED_MS" -ge 2400 ] || fail "the rank ignoring SIGTERM was killed after $ELAPSED_MS ms, before its 2 s grace"
  expect_faster_than 10000
  expect_all_dead "$WORK"/rank.*
}

# Rank 1 is killed by SIGKILL; ranks 0 and 2 notice and exit with code 1
# before hcomm-run looks (it is held stopped meanwhile, as a busy machine may
# hold it): the report must name rank 1 and its signal, not the lowest rank
# that ended.
case_first_failure() {
  "$RUN" -n 3 sh -c '
    echo $$ > "$0/rank.$HCOMM_RANK.tmp" && mv "$0/rank.$HCOMM_RANK.tmp" "$0/rank.$HCOMM_RANK"
    if [ "$HCOMM_RANK" = 1 ]; then
      while [ ! -f "$0/rank.0" ] || [ ! -f "$0/rank.2" ]; do sleep 0.01; done
      kill -STOP $PPID; kill -9 $$
    fi
    while [ ! -f "$0/rank.1" ]; do sleep 0.01; done
    until grep -q "^[0-9]* (.*) Z " "/proc/$(cat "$0/rank.1")/stat" 2>/dev/null; do sleep 0.01; done
    : > "$0/noticed.$HCOMM_RANK"; exit 1' "$WORK" >"$WORK/out" 2>"$WORK/err" &
  local launcher=$!
  wait_for_files "noticed.*" 2
  local pid
  for pid in $(cat "$WORK/rank.0" "$WORK/rank.2"); do
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.05; done
  done
  kill -CONT "$launcher"
  wait "$launcher"
  RC=$?
  expect_rc 137
  expect_stderr_line "hcomm-run: rank 1 (pid $(cat "$WORK/rank.1")) killed by signal 9 (Killed)"
}

case_timeout() {
  launch --timeout 1 -n 2 sh -c 'echo $$ > "$0/rank.$HCOMM_RANK"; exec sleep 60' "$WORK"
  expect_rc 124
  expect_err "hcomm-run: timeout"
  expect_err "--timeout"
  [ "$ELAPSED_MS" -ge 1000 ] || fail "stopped after $ELAPSED_MS ms, before the 1 s timeout"
  expect_faster_than 8000
  expect_all_dead "$WORK"/rank.*
  launch --timeout 30 -n 2 true
  expect_rc 0
}

case_tag_output() {
  launch --tag-output -n 3 sh -c 'printf "line one\nline two\n"; printf "to stderr\n" >&2; printf "no newline"'
  expect_rc 0
  local i
  for i in 0 1 2; do
    printf '[%s] line one\n[%s] line two\n[%s] no newline\n' "$i" "$i" "$i" >"$WORK/want"
    grep -F "[$i] " "$WORK/out" | diff -q - "$WORK/want" >/dev/null || fail "stdout of rank $i is not as expected"
    grep -qxF "[$i] to stderr" "$WORK/err" || fail "stderr of rank $i is missing"
  done
  [ "$(wc -l <"$WORK/out")" -eq 9 ] || fail "stdout should have 9 lines"
  [ "$(wc -l <"$WORK/err")" -eq 3 ] || fail "stderr should have 3 lines"

  # Much output, read in many pieces: every line whole, prefixed and in order.
  launch --tag-output -n 2 sh -c 'seq 1 50000'
  expect_rc 0
  seq 1 50000 >"$WORK/want"
  for i in 0 1; do
    sed -n "s/^\[$i\] //p" "$WORK/out" | cmp -s - "$WORK/want" || fail "long output of rank $i was changed"
  done
  [ "$(wc -l <"$WORK/out")" -eq 100000 ] || fail "long output: wrong line count"

  # Without --tag-output the output is passed through untouched.
  launch -n 1 sh -c 'echo plain'
  [ "$(cat "$WORK/out")" = "plain" ] || fail "untagged output was changed"
}

# A rank that leaves a child behind (holding the output pipe) must not hold
# up the end of the job, and the child is killed.
case_leftover() {
  launch --tag-output -n 2 sh -c 'sleep 60 & echo $! > "$0/child.$HCOMM_RANK"; echo done' "$WORK"
  expect_rc 0
  expect_faster_than 5000
  [ "$(grep -c '^\[[01]\] done$' "$WORK/out")" -eq 2 ] || fail "output of the ranks is missing"
  expect_all_dead "$WORK"/child.*
}

# SIGTERM to hcomm-run reaches every rank; SIGINT too (job control keeps it
# from being ignored in the background).
case_interrupt() {
  set -m
  "$RUN" -n 2 sh -c '
    trap "echo \$HCOMM_RANK > \"\$0/term.\$HCOMM_RANK\"; exit 0" TERM
    echo $$ > "$0/rank.$HCOMM_RANK"
    sleep 60 & wait' "$WORK" >"$WORK/out" 2>"$WORK/err" &
  local launcher=$!
  wait_for_files "rank.*" 2
  kill -TERM "$launcher"
  wait "$launcher"
  RC=$?
  expect_rc 143
  expect_stderr_line "hcomm-run: stopped by signal 15 (Terminated)"
  if [ ! -f "$WORK/term.0" ] || [ ! -f "$WORK/term.1" ]; then fail "SIGTERM did not reach every rank"; fi

  rm -f "$WORK"/rank.*
  "$RUN" -n 2 sh -c 'echo $$ > "$0/rank.$HCOMM_RANK"; sleep 60' "$WORK" >"$WORK/out" 2>"$WORK/err" &
  launcher=$!
  wait_for_files "rank.*" 2
  kill -INT "$launcher"
  wait "$launcher"
  RC=$?
  expect_rc 130
  expect_err "killed by signal 2 (Interrupt)"
  expect_all_dead "$WORK"/rank.*
}

# When hcomm-run itself is killed, its ranks die with it.
case_launcher_killed() {
  "$RUN" -n 2 sh -c 'echo $$ > "$0/rank.$HCOMM_RANK"; exec sleep 60' "$WORK" >"$WORK/out" 2>"$WORK/err" &
  local launcher=$!
  wait_for_files "rank.*" 2
  kill -KILL "$launcher"
  wait "$launcher" 2>/dev/null
  sleep 0.5
  expect_all_dead "$WORK"/rank.*
}

# Leftover segments of the job's ranks are removed, other processes' are not.
case_shm() {
  DECOY="/dev/shm/hcomm-ofi-$$-decoy"
  : >"$DECOY"
  launch -n 2 sh -c 'echo $$ > "$0/rank.$HCOMM_RANK"; : > /dev/shm/hcomm-ofi-$$-0a1b2c3d:0:0
                     : > /dev/shm/hcomm-ofi-$$-0a1b2c3d:0:1; [ "$HCOMM_RANK" = 1 ] && exit 4; exit 0' "$WORK"
  expect_rc 4
  local rank
  for rank in 0 1; do
    local pid
    pid=$(cat "$WORK/rank.$rank")
    ls /dev/shm/hcomm-ofi-"$pid"-* >/dev/null 2>&1 &&
      { rm -f /dev/shm/hcomm-ofi-"$pid"-*; fail "libfabric shm regions of rank $rank remain"; }
  done
  [ -f "$DECOY" ] || fail "a segment of another process was removed"
}

# A command line that cannot run: exit 2, one line that names what is wrong,
# then the hint to --help; nothing starts.
case_bad_arguments() {
  : >"$WORK/not-executable"
  printf 'not a program\n' >"$WORK/bad-format"
  chmod +x "$WORK/bad-format"
  local -a cases=(
    "missing -n N, the number of ranks to start|"
    "missing -n N, the number of ranks to start|--tag-output true"
    "-n: 1 required N missing|-n"
    "--timeout: 1 required S missing|-n 2 --timeout"
    "-n: expected an integer from 1 to 1024, got 'abc'|-n abc true"
    "-n: expected an integer from 1 to 1024, got '-1'|-n -1 true"
    "-n: expected an integer from 1 to 1024, got '0'|-n 0 true"
    "-n: expected an integer from 1 to 1024, got '1025'|-n 1025 true"
    "-n: expected an integer from 1 to 1024, got '2.5'|-n 2.5 true"
    "missing the program to run|-n 2"
    "missing the program to run|-n 2 --"
    "program 'no-such-program-x1' was not found in PATH|-n 2 no-such-program-x1"
    "program '$WORK/not-executable' is not an executable file (check its permissions)|-n 2 $WORK/not-executable"
    "program '$WORK' is a directory|-n 2 $WORK"
    "program '$WORK/missing' does not exist|-n 2 $WORK/missing"
    "--timeout: expected a positive number of seconds, at most 1e8, got '0'|--timeout 0 -n 2 true"
    "--timeout: expected a positive number of seconds, at most 1e8, got 'x'|--timeout x -n 2 true"
    "--timeout: expected a positive number of seconds, at most 1e8, got '1e9'|--timeout=1e9 -n 2 true"
    "The following argument was not expected: --bogus|--bogus -n 2 true"
    "The following argument was not expected: --bogus|-n 2 --bogus true"
    "The following argument was not expected: -x|-n 2 -x -- true"
    "--tag-output takes no value|--tag-output=1 -n 2 true"
  )
  usage_error_cases hcomm-run launch "${cases[@]}"
  # Found and executable, but the kernel will not run it.
  launch -n 2 "$WORK/bad-format"
  expect_rc 2
  expect_stderr_line "hcomm-run: cannot execute '$WORK/bad-format' for rank 0: Exec format error"

  local option want
  for option in --help -h; do
    launch "$option"
    expect_rc 0
    expect_out "Usage: hcomm-run [OPTIONS] [--] program [args...]"
    for want in "-n N" "--tag-output" "--timeout S" "Exit status:"; do
      grep -qF -- "$want" "$WORK/out" || fail "$option does not show $want"
    done
    if [ -s "$WORK/err" ]; then fail "$option printed to stderr"; fi
  done
}

# Everything from the program on is the program's, options of hcomm-run's
# own names among them; -n4, --timeout=S and -- work as before.
case_program_arguments() {
  # One write per line: the ranks share stdout, and two writes of one rank may enclose another's line.
  printf '#!/bin/sh\nline=$(printf "%%s:" "$HCOMM_SIZE" "$@")\necho "$line"\n' >"$WORK/args.sh"
  chmod +x "$WORK/args.sh"
  launch -n 2 "$WORK/args.sh" --foo -n 3 --tag-output --timeout=1 -- --help -h ''
  expect_rc 0
  [ "$(grep -cxF -- "2:--foo:-n:3:--tag-output:--timeout=1:--:--help:-h::" "$WORK/out")" -eq 2 ] ||
    fail "the arguments did not reach both ranks unchanged"
  [ "$(wc -l <"$WORK/out")" -eq 2 ] || fail "expected 2 lines"
  launch -n3 --timeout=30 --tag-output -- "$WORK/args.sh" -n 1
  expect_rc 0
  [ "$(grep -c -- "^\[[012]\] 3:-n:1:$" "$WORK/out")" -eq 3 ] || fail "-n3 --timeout=30 --tag-output -- did not apply"
  # A program named like an option, after --, found in PATH.
  cp "$WORK/args.sh" "$WORK/--odd-name"
  PATH="$WORK:$PATH" launch -n 1 -- --odd-name x
  expect_rc 0
  expect_out "1:x:"
}

"case_$CASE" || exit 1
echo "PASS [$CASE]"
