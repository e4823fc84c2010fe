export const Help = {
  main: `aircoding — OpenCode with a deterministic multi-agent Scheduler for C++ teams

Usage:
  aircoding [dir]                 open the OpenCode TUI in dir (default: .) with AirCoding loaded
  aircoding run [dir] [options]   run headless: the requirement is read from stdin
  aircoding demo [options]        run the offline demo on the bundled C++ sample (scripted model)
  aircoding doctor [dir]          check the engine, the plugin, the toolchain and the model
  aircoding status [dir]          the run's tasks, budgets and what it waits for (--json, --lang)
  aircoding events [dir]          the event log as readable lines (--follow, --json, --lang)
  aircoding dashboard [dir]       a live web page of the run on 127.0.0.1 (--port N; --host H --token T)
  aircoding <command> --help      help for one command

Options for the TUI:
  --scripted FILE   use the scripted model with this scenario (offline; for demos and tests)
  -h, --help        this help
`,
  run: `aircoding run — run a requirement headless, to the end

Usage:
  aircoding run [dir] [--yes] [--json] [--scripted FILE] < requirement.txt
  aircoding run [dir] --resume [--json] [--scripted FILE]
  aircoding run [dir] --resume --answer "yes" | --answer "change: <what to change>"

Reads the requirement from stdin and gives it to the main agent in dir (default: .).
  --resume          continue the run in progress (after a crash or a kill) from its event log; no stdin
  --yes             confirm the Architect's plan without asking
  --answer TEXT     with --resume: answer the plan a run stopped at; "yes" confirms it, "change: …" sends
                    your change to the Architect, who proposes again (the run stops again with exit 2)
  --json            print a JSON summary on stdout instead of the text answer
  --scripted FILE   use the scripted model with this scenario instead of your configured model
Exit codes: 0 everything merged (or the answer was given), 2 blocked or waiting for an answer, 1 error.
`,
  doctor: `aircoding doctor — check that AirCoding can run here

Usage:
  aircoding doctor [dir] [--json]

Checks, each with a one-line fix: the engine binary and its version, the engine pin, the config
dirs (so start-up never waits on an offline install), AirCoding's agents and tools loaded into the
engine, git, cmake, ctest, cppcheck, and a configured model. Exit code 1 if a check fails.
`,
  demo: `aircoding demo — the whole flow, offline, on the bundled C++ sample

Usage:
  aircoding demo [--json] [--keep] [--dir DIR]

Copies samples/cpp-calc into a fresh git repository (DIR, or a temporary one), starts the scripted
model, runs the main agent headless and prints what happened.
  --json   print the JSON summary (the same as aircoding run --json)
  --keep   keep the temporary repository and print its path
`,
}
