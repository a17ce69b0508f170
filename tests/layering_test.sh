#!/usr/bin/env bash
# Dependency direction: util <- filter <- table <- db <- tools, bench.
# A lower folder must never include a header of a higher one; include/sift is the public API
# and may be included from anywhere, but never includes our internal folders.
set -u
root=${1:-.}
fail=0
check() {  # folder, forbidden folders...
  local dir=$1; shift
  for bad in "$@"; do
    if grep -rnE "#include \"${bad}/" "$root/$dir" --include='*.h' --include='*.cc' 2>/dev/null; then
      echo "layering: $dir/ must not include $bad/"; fail=1
    fi
  done
}
check include/sift util filter table db tools bench tests
check util filter table db tools bench tests
check filter table db tools bench tests
check table db tools bench tests
check db tools bench tests
if [ $fail -eq 0 ]; then echo "layering ok"; fi
exit $fail
