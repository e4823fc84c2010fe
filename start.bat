@echo off
rem AirCoding's entry point on Windows with Node.js and npm: installs bun (from the npm registry) and
rem the pinned packages when missing, then opens the TUI, runs the demo or the tests.
setlocal EnableExtensions EnableDelayedExpansion
set "ROOT=%~dp0"
set "BUN_VERSION=1.3.14"

if /I "%~1"=="-h" goto usage
if /I "%~1"=="--help" goto usage

where bun >nul 2>nul
if errorlevel 1 (
  if not exist "%ROOT%.tools\node_modules\.bin\bun.cmd" (
    where npm >nul 2>nul
    if errorlevel 1 (
      echo AirCoding needs Node.js and npm ^(https://nodejs.org^), then run start.bat again. 1>&2
      exit /b 1
    )
    echo . installing bun %BUN_VERSION% from the npm registry into .tools\ 1>&2
    if not exist "%ROOT%.tools" mkdir "%ROOT%.tools"
    if not exist "%ROOT%.tools\package.json" echo {"private":true}> "%ROOT%.tools\package.json"
    call npm install --prefix "%ROOT%.tools" --no-audit --no-fund --loglevel=error bun@%BUN_VERSION%
    if errorlevel 1 exit /b 1
  )
  set "PATH=%ROOT%.tools\node_modules\.bin;!PATH!"
)

if not exist "%ROOT%node_modules\.aircoding-installed" (
  echo . installing the pinned packages ^(bun install^) 1>&2
  pushd "%ROOT%"
  call bun install --frozen-lockfile
  if errorlevel 1 ( popd & exit /b 1 )
  popd
  type nul > "%ROOT%node_modules\.aircoding-installed"
)

if not exist "%ROOT%packages\opencode\engine-config\node_modules\@opencode-ai\plugin\package.json" (
  echo . preparing the engine's config template ^(npm ci^) 1>&2
  pushd "%ROOT%packages\opencode\engine-config"
  call npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  if errorlevel 1 ( popd & exit /b 1 )
  popd
)

if /I "%~1"=="setup" ( echo ready & exit /b 0 )
if /I "%~1"=="test" (
  pushd "%ROOT%"
  call bun run test
  set "RC=!errorlevel!"
  popd
  exit /b !RC!
)
if /I "%~1"=="bench" (
  pushd "%ROOT%"
  call bun run bench %2 %3
  set "RC=!errorlevel!"
  popd
  exit /b !RC!
)
bun "%ROOT%packages\opencode\bin\aircoding.ts" %*
exit /b %errorlevel%

:usage
echo Usage: start.bat [dir]          open the OpenCode TUI in dir with AirCoding loaded
echo        start.bat demo [--json]  run the whole flow offline on the bundled C++ sample
echo        start.bat test           run the test suite
echo        start.bat setup          only install what is missing
echo        start.bat doctor [dir]   check engine, plugin, toolchain and model
exit /b 0
