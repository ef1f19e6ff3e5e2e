#!/bin/sh
# run_pages.sh — ctest entry job_browser: pages.test.mjs with node's test runner, using the
# playwright-core that tests/browser/run.sh installs (npm ci there when it is missing).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
browser=$here/../browser
if [ ! -d "$browser/node_modules/playwright-core" ]; then
  echo "job_browser: npm ci (playwright-core) in tests/browser"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
[ -x /usr/bin/chromium ] || { echo "job_browser: FAILED: /usr/bin/chromium is not installed (scripts/deps.sh test)"; exit 1; }
cd "$here"
exec node --test --test-reporter=spec pages.test.mjs
