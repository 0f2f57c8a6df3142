#!/usr/bin/env bash
# npm's pretest: find or install the real servers the test suites run. Never skips a suite:
# a server it cannot provide stops `npm test` here, with one line naming the command to run.
set -euo pipefail

# One line per command a suite runs: the command (a name on PATH, or an absolute path, which may
# be a glob such as /usr/lib/postgresql/*/bin/postgres) and the Debian package that provides it.
SERVERS=(
  "prometheus  prometheus"   # test/grafana/prometheus.test.ts (/usr/bin/prometheus)
  "promtool    prometheus"   # test/grafana/deploy.test.ts (/usr/bin/promtool)
)

found() {
  case $1 in
    /*) compgen -G "$1" >/dev/null ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

missing=() pkgs=()
for entry in "${SERVERS[@]}"; do
  read -r cmd pkg <<<"$entry"
  found "$cmd" && continue
  missing+=("$cmd")
  [[ " ${pkgs[*]-} " == *" $pkg "* ]] || pkgs+=("$pkg")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

install="apt-get install -y --no-install-recommends ${pkgs[*]}"
if ! command -v apt-get >/dev/null; then
  echo "npm test needs ${missing[*]}: install them (on Debian: sudo apt-get update && sudo $install), then run npm test again" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as=(env)
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as=(sudo -n env)
else
  if command -v sudo >/dev/null; then run="sudo apt-get update && sudo $install"; else run="su -c 'apt-get update && $install'"; fi
  echo "npm test needs ${missing[*]}: run $run, then npm test again" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
apt() { "${as[@]}" DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300 "$@" >>"$log" 2>&1; }
echo "pretest: installing ${pkgs[*]} for ${missing[*]} (apt-get)" >&2
# The package lists are refreshed only when the install fails without them (none yet, or stale).
if ! apt install -y --no-install-recommends "${pkgs[@]}"; then
  if ! { apt update && apt install -y --no-install-recommends "${pkgs[@]}"; }; then
    cat "$log" >&2
    echo "pretest: could not install ${pkgs[*]}; run $install as root, then npm test again" >&2
    exit 1
  fi
fi
hash -r
for cmd in "${missing[@]}"; do
  found "$cmd" || { echo "pretest: ${pkgs[*]} installed, but $cmd is still not found (PATH=$PATH)" >&2; exit 1; }
done
