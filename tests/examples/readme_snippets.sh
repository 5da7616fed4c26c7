#!/usr/bin/env bash
# Checks that README.md's ```c block is examples/allreduce.c and its ```c++
# block examples/allreduce.cpp, word for word: the examples are built with
# warnings as errors and run by CTest, so the README shows code that works.
#   readme_snippets.sh <HComm source dir>
set -euo pipefail
source=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
# block <language>: the README's code blocks fenced as ```<language>.
block() {
  awk -v fence="\`\`\`$1" '$0 == fence { inside = 1; next } /^```/ { inside = 0 } inside' "$source/README.md"
}
for pair in c:allreduce.c c++:allreduce.cpp; do
  language=${pair%%:*} example=$source/examples/${pair#*:}
  block "$language" > "$work/snippet"
  [ -s "$work/snippet" ] || { echo "FAIL: README.md has no \`\`\`$language block"; status=1; continue; }
  if ! diff -u "$example" "$work/snippet" > "$work/diff"; then
    echo "FAIL: README.md's \`\`\`$language code is not $example (paste the example there, or change both):"
    cat "$work/diff"
    status=1
  fi
done
[ "$status" -ne 0 ] || echo "README.md's code is examples/allreduce.c and examples/allreduce.cpp"
exit "$status"
