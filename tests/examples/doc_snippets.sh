#!/usr/bin/env bash
# Checks that a page shows an example's code word for word: for each
# <language>:<file>, one of the page's code blocks fenced as ```<language>
# must be <file>. The examples are built with warnings as errors and run by
# CTest, so the page shows code that works.
#   doc_snippets.sh <page.md> <language>:<file>...
set -euo pipefail
page=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for pair in "$@"; do
  language=${pair%%:*} example=${pair#*:}
  rm -f "$work"/block.*
  # Each ```<language> block of the page into a file of its own.
  awk -v fence="\`\`\`$language" -v out="$work/block." \
    '$0 == fence { inside = 1; n++; printf "" > (out n); next } /^```/ { inside = 0 } inside { print > (out n) }' "$page"
  blocks=("$work"/block.*)
  if [ ! -e "${blocks[0]}" ]; then
    echo "FAIL: $page has no \`\`\`$language block"
    status=1
    continue
  fi
  found=0
  for b in "${blocks[@]}"; do cmp -s "$example" "$b" && found=1; done
  if [ "$found" -eq 0 ]; then
    echo "FAIL: no \`\`\`$language block of $page is $example (paste the example there, or change both); the first:"
    diff -u "$example" "${blocks[0]}" || true
    status=1
  fi
done
[ "$status" -ne 0 ] || echo "$page shows $* word for word"
exit "$status"
