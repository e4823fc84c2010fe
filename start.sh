#!/usr/bin/env bash
# AirCoding's one entry point on a machine with Node.js and npm: it installs what is missing
# (bun from the npm registry, the pinned packages), then opens the TUI, runs the demo or the tests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUN_VERSION=1.3.14

say() { printf '\033[2m· %s\033[0m\n' "$*" >&2; }

usage() {
  cat <<'USAGE'
Usage: ./start.sh [dir]          open the OpenCode TUI in dir (default: .) with AirCoding loaded
       ./start.sh demo [--json]  run the whole flow offline on the bundled C++ sample
       ./start.sh test           run the test suite (what CI runs)
       ./start.sh bench [--json] run the benchmarks
       ./start.sh setup          only install what is missing
       ./start.sh doctor [dir]   check engine, plugin, toolchain and model
       ./start.sh run [dir] < requirement.txt
                                 run headless (see ./start.sh run --help)
The first run installs bun (into .tools/) and the pinned packages; later runs start at once.
USAGE
}

ensure_bun() {
  if command -v bun >/dev/null 2>&1; then return; fi
  local local_bin="$ROOT/.tools/node_modules/.bin"
  if [ ! -x "$local_bin/bun" ]; then
    command -v npm >/dev/null 2>&1 || { echo "AirCoding needs Node.js and npm (https://nodejs.org), then run ./start.sh again." >&2; exit 1; }
    say "installing bun $BUN_VERSION from the npm registry into .tools/"
    mkdir -p "$ROOT/.tools"
    [ -f "$ROOT/.tools/package.json" ] || echo '{"private":true}' > "$ROOT/.tools/package.json"
    npm install --prefix "$ROOT/.tools" --no-audit --no-fund --loglevel=error "bun@$BUN_VERSION" >&2
  fi
  export PATH="$local_bin:$PATH"
}

ensure_packages() {
  local stamp="$ROOT/node_modules/.aircoding-installed"
  if [ ! -f "$stamp" ] || [ "$ROOT/bun.lock" -nt "$stamp" ]; then
    say "installing the pinned packages (bun install)"
    (cd "$ROOT" && bun install --frozen-lockfile) >&2
    touch "$stamp"
  fi
  # The template for OpenCode's config dirs, so the engine never waits on its start-up install.
  local engine_config="$ROOT/packages/opencode/engine-config"
  if [ ! -f "$engine_config/node_modules/@opencode-ai/plugin/package.json" ]; then
    say "preparing the engine's config template (npm ci)"
    (cd "$engine_config" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
  fi
}

# Workers' commands and the gates run inside bubblewrap (Linux): installed with apt when missing and we may.
ensure_sandbox() {
  [ "$(uname -s)" = Linux ] || return 0
  command -v bwrap >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null 2>&1; }; then
    say "installing bubblewrap (the OS sandbox) with apt-get"
    local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bubblewrap >&2 || say "could not install bubblewrap: see ./start.sh doctor"
  else
    say "bubblewrap (bwrap) is missing: install it with your package manager (see ./start.sh doctor)"
  fi
}

aircoding() { exec bun "$ROOT/packages/opencode/bin/aircoding.ts" "$@"; }

case "${1:-}" in
  -h|--help|help) usage; exit 0 ;;
esac
ensure_bun
ensure_packages
ensure_sandbox
case "${1:-}" in
  setup) say "ready: bun $(bun --version)"; exit 0 ;;
  test) shift; cd "$ROOT"; exec bun run test "$@" ;;
  bench) shift; cd "$ROOT"; exec bun run bench "$@" ;;
  demo|doctor|run) aircoding "$@" ;;
  *) aircoding "$@" ;;
esac
