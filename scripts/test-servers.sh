#!/usr/bin/env bash
# npm's pretest: find or install the real servers the test suites run. Never skips a suite:
# a server it cannot provide stops `npm test` here, with one line naming the command to run.
set -euo pipefail

# One line per command a suite runs: the command (a name on PATH, or an absolute path, which may
# be a glob such as /usr/lib/postgresql/*/bin/postgres) and the Debian package that provides it.
SERVERS=(
  "prometheus  prometheus"   # test/grafana/prometheus.test.ts (/usr/bin/prometheus)
  "promtool    prometheus"   # test/grafana/deploy.test.ts (/usr/bin/promtool)
  # test/store/pg-server.ts starts a temporary cluster: initdb, pg_ctl and postgres from one
  # install. Debian keeps them off PATH, under /usr/lib/postgresql/<major>/bin.
  "initdb|/usr/lib/postgresql/*/bin/initdb     postgresql"
  "pg_ctl|/usr/lib/postgresql/*/bin/pg_ctl     postgresql"
  "postgres|/usr/lib/postgresql/*/bin/postgres postgresql"
  # test/ui/ drives the inspector page in Debian's browser through playwright-core (/usr/bin/chromium).
  "/usr/bin/chromium  chromium"
)

# A command is found if any of its `|`-separated alternatives is.
found() {
  local alt
  IFS='|' read -r -a alts <<<"$1"
  for alt in "${alts[@]}"; do
    case $alt in
      /*) compgen -G "$alt" >/dev/null && return 0 ;;
      *) command -v "$alt" >/dev/null && return 0 ;;
    esac
  done
  return 1
}

# The suite starts thousands of processes (real agents and their tools among them). With Linux's
# default of 32,768 process ids they wrap within one run, and a signal sent to an id some process
# kept after its owner exited can reach a test's database server that took the id over: a chaos
# run once saw its PostgreSQL get a SIGTERM from nowhere, mid-test. Where this may (root, and
# the kernel lets it), ids are given the kernel's widest range, so none comes round again in a run.
pid_max=/proc/sys/kernel/pid_max
if [ -w "$pid_max" ] && [ "$(cat "$pid_max")" -lt 4194304 ]; then
  echo 4194304 >"$pid_max" 2>/dev/null && echo "test-servers: kernel.pid_max raised to 4194304 (process ids do not wrap within a run)" || true
fi

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
