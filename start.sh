#!/usr/bin/env bash
# AirCoding's one entry point on a machine with Node.js and npm: it installs what is missing
# (bun from the npm registry, the pinned packages), then opens the TUI, runs the demo or the tests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUN_VERSION=1.3.14

say() { printf '\033[2m· %s\033[0m\n' "$*" >&2; }

usage() {
  # Said with the command that works in this shell: `aircoding` through the shim, else how this script was run.
  local name="${AIRCODING_COMMAND:-./start.sh}"
  sed "s#\./start\.sh#${name}#g" <<'USAGE'
Usage: ./start.sh [dir]                 open the OpenCode TUI in dir (default: .) with AirCoding loaded;
                                        a run in progress resumes, and you are told where it stands
       ./start.sh [dir] --scripted FILE open it with the scripted model playing FILE (offline), e.g.
                                        packages/opencode/scenarios/demo-chat.json
       ./start.sh run [dir] [--yes] < requirement.txt
                                        run headless; without --yes it stops at the plan (exit 2)
       ./start.sh run [dir] --resume [--answer "yes" | --answer "change: ..."]
                                        go on with a stopped or interrupted run
       ./start.sh status [dir]          the run's tasks, budgets and what it waits for
       ./start.sh events [dir] [--follow]
                                        the Scheduler's event log, as readable lines
       ./start.sh dashboard [dir]       a live web page of the run on 127.0.0.1
       ./start.sh doctor [dir]          check engine, plugin, toolchain and model
       ./start.sh init [dir]            detect the project's toolchain, run the baseline, write toolchain.json
       ./start.sh demo [--json]         run the whole flow offline on the bundled C++ sample
       ./start.sh test                  run the test suite (what CI runs first; under 15 minutes)
       ./start.sh soak                  the long checks CI runs after it: kill loops, the TUI screens, 30 chaos seeds
       ./start.sh bench [--json]        run the benchmarks
       ./start.sh setup                 only install what is missing
       ./start.sh env                   print the line that puts `aircoding` on PATH in this shell:
                                        eval "$(./start.sh env)"
Every command takes --help. Exit codes: 0 done, 2 the run waits for you (a plan to confirm, a question),
1 any error, a usage error included (an unknown command or flag, said in one line with the nearest one).
The first run installs bun (into .tools/) and the pinned packages, and the
system tools the gates need when missing (git, cmake, g++, cppcheck, ccache, clang-tidy, ripgrep, bubblewrap, Xvfb: apt-get, sudo -n
or brew; else it stops with the command to type); later runs start at once.
USAGE
}

# `aircoding` as a command of its own: .tools/bin/aircoding runs this checkout's CLI, and says so
# (AIRCODING_SHIM), so hints and --help name `aircoding` there and `./start.sh` when run as ./start.sh.
write_shim() {
  mkdir -p "$ROOT/.tools/bin"
  local shim="$ROOT/.tools/bin/aircoding"
  local text
  text="$(printf '#!/usr/bin/env bash\nAIRCODING_SHIM=1 exec "%s" "$@"' "$ROOT/start.sh")"
  if [ ! -x "$shim" ] || [ "$(cat "$shim")" != "$text" ]; then
    printf '%s\n' "$text" > "$shim"
    chmod +x "$shim"
  fi
}

# The command hints name: `aircoding` through the shim, else the path this script was run by.
if [ "${AIRCODING_SHIM:-}" = 1 ]; then export AIRCODING_COMMAND=aircoding; else export AIRCODING_COMMAND="$0"; fi
unset AIRCODING_SHIM
# A shim written by an older start.sh did not say it is the shim: renew it.
[ -x "$ROOT/.tools/bin/aircoding" ] && write_shim

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

# The system tools the gates drive (git, cmake/ctest, a C++ compiler, cppcheck) and those that make them fast
# or safe (ccache, bubblewrap), and clang-tidy for projects with a .clang-tidy. What is missing is installed: apt-get as root, `sudo -n` when allowed without a
# password, brew on macOS. Otherwise the run stops here, before anything starts, with the one command to type.
# AIRCODING_NO_INSTALL=1 only reports. `ensure_system_tools test` also requires what the test suite drives: every
# optional gate tool (their tests assert them), tmux (the TUI tests) and Chromium (the dashboard's browser test).
ensure_system_tools() {
  local required=() optional=()
  local testing=0; [ "${1:-}" = test ] && testing=1
  command -v git >/dev/null 2>&1 || required+=(git)
  { command -v cmake >/dev/null 2>&1 && command -v ctest >/dev/null 2>&1; } || required+=(cmake)
  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 || required+=(g++)
  command -v cppcheck >/dev/null 2>&1 || required+=(cppcheck)
  if [ $testing = 1 ]; then
    command -v ccache >/dev/null 2>&1 || required+=(ccache)
    command -v distccd >/dev/null 2>&1 || required+=(distcc)
    command -v clang-tidy >/dev/null 2>&1 || required+=(clang-tidy)
    command -v rg >/dev/null 2>&1 || required+=(ripgrep)
    command -v tmux >/dev/null 2>&1 || required+=(tmux)
    # The Python analysers' tests run real mypy and pylint (Debian's packages; pip's on macOS).
    command -v mypy >/dev/null 2>&1 || required+=(mypy)
    command -v pylint >/dev/null 2>&1 || required+=(pylint)
    # The Go and Rust analysers' tests run real go vet, staticcheck and cargo clippy (Debian's golang-go,
    # go-staticcheck, cargo, rust-clippy).
    command -v go >/dev/null 2>&1 || required+=(golang-go)
    command -v cargo >/dev/null 2>&1 || required+=(cargo)
    command -v cargo-clippy >/dev/null 2>&1 || required+=(rust-clippy)
    command -v staticcheck >/dev/null 2>&1 || command -v go-staticcheck >/dev/null 2>&1 || required+=(go-staticcheck)
    # The test runners' tests run real pytest (Debian's python3-pytest, for the python3 on PATH).
    python3 -c 'import pytest' >/dev/null 2>&1 || required+=(python3-pytest)
    if [ "$(uname -s)" = Linux ]; then
      command -v bwrap >/dev/null 2>&1 || required+=(bubblewrap)
      command -v chromium >/dev/null 2>&1 || required+=(chromium)
      # The service probe's tests: tcpdump captures the service's loopback, nc (netcat-openbsd) is their probe.
      command -v tcpdump >/dev/null 2>&1 || [ -x /usr/sbin/tcpdump ] || required+=(tcpdump)
      command -v nc >/dev/null 2>&1 || required+=(netcat-openbsd)
      # The results store's tests start a real Redis; the deploy tests a real sshd, reached with ssh/scp.
      command -v redis-server >/dev/null 2>&1 || required+=(redis-server)
      # The metrics tests: promtool parses /metrics, a real Prometheus scrapes `aircoding metrics`.
      { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || required+=(prometheus)
      { [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1; } || required+=(openssh-server openssh-client)
      # The ui capture's tests: Xvfb, xwd, xwininfo, and the Xlib and Qt Widgets programs they build.
      command -v Xvfb >/dev/null 2>&1 || required+=(xvfb)
      command -v xwd >/dev/null 2>&1 || required+=(x11-apps)
      command -v xwininfo >/dev/null 2>&1 || required+=(x11-utils)
      [ -f /usr/include/X11/Xlib.h ] || required+=(libx11-dev)
      { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists Qt5Widgets; } || required+=(pkg-config qtbase5-dev)
      # The house rules' tests integrate spdlog offline (find_package), as a project without logging does.
      [ -f /usr/include/spdlog/spdlog.h ] || required+=(libspdlog-dev)
    fi
  fi
  command -v ccache >/dev/null 2>&1 || optional+=(ccache)
  command -v clang-tidy >/dev/null 2>&1 || optional+=(clang-tidy)
  # A project with Python files gets mypy's and pylint's gates when they are installed.
  command -v mypy >/dev/null 2>&1 || optional+=(mypy)
  command -v pylint >/dev/null 2>&1 || optional+=(pylint)
  # A project with Go or Rust files gets go vet's and clippy's gates when go and cargo are installed (not pulled in
  # for a C++ project: Go is 200 MB); cargo without clippy gets it, its gate would otherwise record "not run".
  if command -v cargo >/dev/null 2>&1; then command -v cargo-clippy >/dev/null 2>&1 || optional+=(rust-clippy); fi
  # The engine's grep and glob tools need ripgrep; offline they cannot download it.
  command -v rg >/dev/null 2>&1 || optional+=(ripgrep)
  if [ "$(uname -s)" = Linux ]; then command -v bwrap >/dev/null 2>&1 || optional+=(bubblewrap); fi
  # A service task's probe captures the service's traffic with tcpdump (nsenter and setpriv: util-linux, always there).
  if [ "$(uname -s)" = Linux ] && [ $testing = 0 ]; then command -v tcpdump >/dev/null 2>&1 || [ -x /usr/sbin/tcpdump ] || optional+=(tcpdump); fi
  # A results store a team shares may be Redis (toolchain.json cache.results.remote = redis://…).
  if [ "$(uname -s)" = Linux ] && [ $testing = 0 ]; then command -v redis-server >/dev/null 2>&1 || optional+=(redis-server); fi
  # Deploy targets are reached with ssh/scp; the deploy tests start a local sshd.
  if [ "$(uname -s)" = Linux ] && [ $testing = 0 ]; then [ -x /usr/sbin/sshd ] || optional+=(openssh-server); fi
  # A ui task's capture: a private X display (Xvfb), its screenshot (xwd) and window tree (xwininfo).
  if [ "$(uname -s)" = Linux ] && [ $testing = 0 ]; then
    command -v Xvfb >/dev/null 2>&1 || optional+=(xvfb)
    command -v xwd >/dev/null 2>&1 || optional+=(x11-apps)
    command -v xwininfo >/dev/null 2>&1 || optional+=(x11-utils)
  fi
  # (the ${a[@]+…} form: bash 3.2 on macOS treats an empty array as unset under set -u)
  local all=(${required[@]+"${required[@]}"} ${optional[@]+"${optional[@]}"})
  [ ${#all[@]} -eq 0 ] && return 0
  # Optional tools are tried once per checkout: a package the system lacks must not cost an apt-get every start.
  local tried="$ROOT/.tools/.system-tools-tried"
  if [ ${#required[@]} -eq 0 ] && [ -f "$tried" ]; then return 0; fi

  local install="" hint=""
  if [ "$(uname -s)" = Darwin ]; then
    local brew_pkgs=() xcode=0
    for p in ${all[@]+"${all[@]}"}; do case "$p" in g++) xcode=1 ;; bubblewrap|chromium|python3-pytest) ;; clang-tidy) brew_pkgs+=(llvm) ;; golang-go) brew_pkgs+=(go) ;; go-staticcheck) brew_pkgs+=(staticcheck) ;; cargo|rust-clippy) brew_pkgs+=(rust) ;; *) brew_pkgs+=("$p") ;; esac; done
    hint="$([ $xcode = 1 ] && printf 'xcode-select --install && ')brew install ${brew_pkgs[*]:-}"
    if command -v brew >/dev/null 2>&1 && [ $xcode = 0 ] && [ ${#brew_pkgs[@]} -gt 0 ]; then install="brew install ${brew_pkgs[*]}"; fi
  elif command -v apt-get >/dev/null 2>&1; then
    hint="sudo apt-get install -y ${all[*]}"
    if [ "$(id -u)" = 0 ]; then install="apt-get"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then install="sudo -n apt-get"
    fi
  else
    hint="install with your package manager: ${all[*]}"
  fi

  if [ -n "$install" ] && [ -z "${AIRCODING_NO_INSTALL:-}" ]; then
    say "installing what the $([ $testing = 1 ] && echo tests || echo gates) need: ${all[*]}"
    if [ "$(uname -s)" = Darwin ]; then
      $install >&2 || true
    else
      (export DEBIAN_FRONTEND=noninteractive; $install update -qq && $install install -y -qq "${all[@]}") >&2 || true
    fi
    mkdir -p "$ROOT/.tools" && touch "$tried"
    required=()
    command -v git >/dev/null 2>&1 || required+=(git)
    command -v cmake >/dev/null 2>&1 || required+=(cmake)
    command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 || required+=(g++)
    command -v cppcheck >/dev/null 2>&1 || required+=(cppcheck)
    if [ $testing = 1 ]; then
      for t in ccache distcc clang-tidy rg tmux mypy pylint go cargo cargo-clippy; do command -v $t >/dev/null 2>&1 || required+=($t); done
      command -v staticcheck >/dev/null 2>&1 || command -v go-staticcheck >/dev/null 2>&1 || required+=(staticcheck)
      python3 -c 'import pytest' >/dev/null 2>&1 || required+=(python3-pytest)
      if [ "$(uname -s)" = Linux ]; then for t in bwrap chromium tcpdump nc Xvfb xwd xwininfo prometheus promtool; do command -v $t >/dev/null 2>&1 || [ -x /usr/sbin/$t ] || required+=($t); done; fi
    fi
  fi
  if [ ${#required[@]} -gt 0 ]; then
    echo "AirCoding's $([ $testing = 1 ] && echo tests || echo gates) need ${required[*]}, which $([ ${#required[@]} = 1 ] && echo is || echo are) not installed; nothing was started." >&2
    echo "Install with:" >&2
    echo "  $hint" >&2
    echo "then run ./start.sh ${1:-} again." >&2
    exit 1
  fi
  command -v ccache >/dev/null 2>&1 || say "no ccache: every worktree builds from nothing (install: $hint)"
}

# Hints printed by AirCoding name the command that started it (AIRCODING_COMMAND, set above).
aircoding() {
  exec bun "$ROOT/packages/opencode/bin/aircoding.ts" "$@"
}

case "${1:-}" in
  -h|--help|help) usage; exit 0 ;;
  env) write_shim; printf 'export PATH="%s:$PATH"\n' "$ROOT/.tools/bin"; exit 0 ;;
esac
ensure_bun
ensure_packages
case "${1:-}" in
  setup) ensure_system_tools setup; say "ready: bun $(bun --version)"; exit 0 ;;
  # The suite asserts the hints of a product started as `aircoding`, whatever started the suite.
  test) ensure_system_tools test; shift; cd "$ROOT"; unset AIRCODING_COMMAND; exec bun run test "$@" ;;
  soak) ensure_system_tools test; shift; cd "$ROOT"; unset AIRCODING_COMMAND; exec bun run soak "$@" ;;
  bench) shift; cd "$ROOT"; exec bun run bench "$@" ;;
  doctor|init|status|events|dashboard) aircoding "$@" ;;
  demo|run) ensure_system_tools "$1"; aircoding "$@" ;;
  *) ensure_system_tools; aircoding "$@" ;;
esac
