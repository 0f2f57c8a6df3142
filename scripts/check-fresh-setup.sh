#!/usr/bin/env bash
# Checks the README's two commands on this machine: with Debian's prometheus package removed, a
# clean clone of the current commit passes `npm ci && npm test`, its pretest installing Prometheus
# again. Needs root on Debian. Whatever happens, prometheus is installed again at the end.
#   scripts/check-fresh-setup.sh           the whole `npm test`
#   scripts/check-fresh-setup.sh --quick   the pretest, then only the test/grafana suites
set -euo pipefail

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "check-fresh-setup: needs root on Debian (it removes and reinstalls the prometheus package)" >&2
  exit 1
fi
quick=false
[ "${1-}" = --quick ] && quick=true
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$src" rev-parse HEAD)
tmp=$(mktemp -d)

finish() {
  local rc=$?
  hash -r
  if ! command -v prometheus >/dev/null; then
    echo "check-fresh-setup: prometheus is missing at the end; installing it again" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null || rc=1
    hash -r
  fi
  rm -rf "$tmp"
  echo "check-fresh-setup: at the end, prometheus is $(command -v prometheus || echo 'NOT installed')"
  if [ "$rc" -eq 0 ]; then echo "check-fresh-setup: PASS"; else echo "check-fresh-setup: FAIL ($rc)"; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

echo "check-fresh-setup: commit $commit of $src, cloned into $tmp/repo"
git clone -q --no-checkout "$src" "$tmp/repo"
git -C "$tmp/repo" checkout -q --detach "$commit"

if dpkg -s prometheus >/dev/null 2>&1; then
  echo "check-fresh-setup: apt-get remove -y prometheus"
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq prometheus >/dev/null
fi
hash -r
for cmd in prometheus promtool; do
  if command -v "$cmd" >/dev/null; then
    echo "check-fresh-setup: $cmd is still on PATH ($(command -v "$cmd")); cannot check a machine without it" >&2
    exit 1
  fi
done
echo "check-fresh-setup: prometheus and promtool are absent from PATH"

cd "$tmp/repo"
echo "check-fresh-setup: npm ci --no-audit --no-fund"
npm ci --no-audit --no-fund
if $quick; then
  echo "check-fresh-setup: npm run pretest && npx vitest run test/grafana"
  npm run pretest
  npx vitest run test/grafana
else
  echo "check-fresh-setup: npm test"
  npm test
fi

hash -r
if [ "$(command -v prometheus)" != /usr/bin/prometheus ]; then
  echo "check-fresh-setup: the tests passed but prometheus is not /usr/bin/prometheus" >&2
  exit 1
fi
echo "check-fresh-setup: the pretest installed $(prometheus --version 2>&1 | head -n 1) at /usr/bin/prometheus"
