#!/bin/sh
# run.sh — ctest entry of the result.html browser tests (label browser;nosan).
# Installs playwright-core from package-lock.json (npm ci) when node_modules is missing or
# stale, then runs page.test.mjs with node's built-in test runner. Artifacts (pages,
# screenshots) go to $TP_BINARY_DIR/browser/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "browser: npm ci (playwright-core)"
  npm ci --no-audit --no-fund --loglevel=error
fi
[ -x /usr/bin/chromium ] || { echo "browser: FAILED: /usr/bin/chromium is not installed (scripts/deps.sh test)"; exit 1; }
exec node --test --test-reporter=spec page.test.mjs
