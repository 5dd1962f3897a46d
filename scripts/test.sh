#!/usr/bin/env bash
# npm test: builds dist/, which the tests that start a process run; then the files that share no
# state side by side, then the few that must run alone, one at a time.
# Both groups always run; the exit status is the first group's failure, else the second's.
set -uo pipefail
cd "$(dirname "$0")/.."

npm run build --silent || exit 1

# 3 files at once: on 2 shared cores the suite took 13 min 48 s, against 27 min 28 s one at a time;
# at 4, under the same load, a serve took over 20 s to start.
CONCURRENCY="${TEST_CONCURRENCY:-3}"

# Each runs alone, for the reason beside it.
ALONE=(
  test/store/sqlite-writer.test.ts # asserts the write lock is taken within 40 ms: timing, which a busy CPU breaks
)
# The longest files start first, so that no long one is left running alone at the end.
FIRST=(
  test/bench/smoke.test.ts
  test/process/start.test.ts
  test/process/workers.test.ts
  test/process/crash-safety.test.ts
  test/process/metrics-listener.test.ts
  test/process/tracing.test.ts
  test/cli/settings.test.ts
  test/cli/keys-serve.test.ts
  test/cli/seed.test.ts
)

mapfile -t ALL < <(find test packages/client/test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
mapfile -t TOGETHER < <(printf '%s\n' "${FIRST[@]}" "${ALL[@]}" | awk '!seen[$0]++' | grep -vxF -f <(printf '%s\n' "${ALONE[@]}") | while read -r file; do [ -f "$file" ] && echo "$file"; done)

# --test-force-exit: a file whose test failed before stopping a child it started ends anyway (and kills the child, test/support/cli.ts).
node --import tsx --test --test-force-exit --test-concurrency="$CONCURRENCY" "${TOGETHER[@]}"
together=$?
node --import tsx --test --test-force-exit --test-concurrency=1 "${ALONE[@]}"
alone=$?
[ "$together" -ne 0 ] && exit "$together"
exit "$alone"
