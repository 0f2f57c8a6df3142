#!/usr/bin/env bash
# npm's pretest, after test-servers.sh: the agent binaries the lock file cannot hold. Never skips
# a suite: one it cannot provide stops `npm test` here, with a line saying why.
#
# Cline (test/e2e/agents/cline-long.test.ts): the `cline` package names a binary package per
# platform as optional dependencies, and the registry carries only @cline/cli-linux-x64 of 3.0.65,
# so `npm ci` refuses a lock made with it ("Missing: @cline/cli-darwin-arm64@ from lock file").
# The binary alone (one package, Bun compiled, nothing else needed) goes under node_modules/.cache,
# which `npm ci` empties, so a clean install gets it again.
set -euo pipefail
cd "$(dirname "$0")/.."

CLINE_VERSION=3.0.65
platform=$(node -p "({ linux: 'linux', darwin: 'darwin', win32: 'windows' })[process.platform] + '-' + process.arch")
dir=node_modules/.cache/agents/cline
bin="$dir/node_modules/@cline/cli-$platform/bin/cline"

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "$CLINE_VERSION" ]; then exit 0; fi
echo "test-agents: installing @cline/cli-$platform@$CLINE_VERSION into $dir"
mkdir -p "$dir"
if ! npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "@cline/cli-$platform@$CLINE_VERSION"; then
  echo "test-agents: could not install @cline/cli-$platform@$CLINE_VERSION (the Cline suite needs it); install it into $dir with npm" >&2
  exit 1
fi
