#!/usr/bin/env bash
# npm test: builds dist/ (the tests that start a process run it) and the tests, then runs the
# files that share no state side by side, then those that must run alone, one at a time. Both
# groups always run; the status is 1 if either failed.
# npm run test:quick (--quick): the same over the test files that start no program
# (scripts/quick-tests.ts), without dist/, after one line naming what it leaves out.
set -uo pipefail
cd "$(dirname "$0")/.."

QUICK=false
[ "${1:-}" = --quick ] && QUICK=true
[ "$QUICK" = true ] || npm run build --silent || exit 1
# The tests run compiled by esbuild (tsx's own compiler) into .test-build/, the same tree inside:
# tsx's loader, in every test process and worker thread, cost about a third of the suite's CPU.
BUILD=.test-build
rm -rf "$BUILD"
mapfile -t SOURCES < <(find src test scripts packages/client/src packages/client/test -name '*.ts' -not -path '*/node_modules/*')
npx --no-install esbuild "${SOURCES[@]}" --outdir="$BUILD" --outbase=. --platform=node --format=esm --target=node20 --sourcemap --log-level=warning || exit 1

# 3 files at once on 2 cores: the waits of one file (a drain delay, a cache window) overlap the work of others.
CONCURRENCY="${TEST_CONCURRENCY:-3}"

# Each runs alone, after the rest, for the reason beside it: one line a file.
ALONE=(
  test/store/sqlite/writer.test.ts # asserts the write lock is taken within 40 ms: timing, which a busy CPU breaks
  test/process/cpu-quota.test.ts # a CPU quota's 80 ms pauses against MAX_QUEUE_DELAY's 50: a busy CPU would add its own
  test/process/busy-neighbours.test.ts # starts four spinning processes and two fsyncing writers: every file beside it would run beside them
  test/ha/cluster.test.ts # fails over a Patroni cluster of its own (test/support/ha-cluster.ts) under load
  test/deploy/rolling-update.test.ts # replaces instances under load within SHUTDOWN_DELAY's margin over the endpoint's removal: a busy CPU eats it
  test/image/image.test.ts # builds the image: podman's build takes every core
)
# A name left behind by a move would drop its file from its list unseen.
for file in "${ALONE[@]}"; do [ -f "$file" ] || { echo "scripts/test.sh: $file does not exist" >&2; exit 1; }; done
mapfile -t ALL < <(find test packages/client/test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
if [ "$QUICK" = true ]; then
  QUICK_FILES="$(node "$BUILD/scripts/quick-tests.js" "${ALL[@]}")" || exit 1
  mapfile -t ALL <<< "$QUICK_FILES"
  mapfile -t ALONE < <(printf '%s\n' "${ALONE[@]}" | grep -xF -f <(printf '%s\n' "${ALL[@]}"))
fi
# node --test runs its files in the order of their names, whatever order they are given in.
mapfile -t TOGETHER < <(printf '%s\n' "${ALL[@]}" | grep -vxF -f <(printf '%s\n' "${ALONE[@]}"))

compiled () { for file in "$@"; do echo "$BUILD/${file%.ts}.js"; done; }
# --test-force-exit: a file whose test failed before stopping a child it started ends anyway (and kills the child, test/support/programs.ts).
failed=0
node --enable-source-maps --test --test-force-exit --test-concurrency="$CONCURRENCY" $(compiled "${TOGETHER[@]}") || failed=1
# Given no file, node --test would look for tests of its own: none is run instead.
[ "${#ALONE[@]}" -eq 0 ] || node --enable-source-maps --test --test-force-exit --test-concurrency=1 $(compiled "${ALONE[@]}") || failed=1
exit "$failed"
