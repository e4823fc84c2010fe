import { CommandLine } from "./command-line"
import { AirPaths } from "../scheduler/core/air-paths"

/** The help texts, written with `aircoding`; `say` names the command that works in this shell. */
export const Help = {
  /** A help text with every command line in it naming how AirCoding was started (`./start.sh` before `./start.sh env`). */
  say(text: string, env: NodeJS.ProcessEnv = process.env): string {
    const name = CommandLine.name(env)
    return name === "aircoding" ? text : text.replace(/\baircoding(?= |`)/g, name)
  },

  main: `aircoding — OpenCode with a deterministic multi-agent Scheduler for C++ teams

Usage:
  aircoding [dir]                 open the OpenCode TUI in dir (default: .) with AirCoding loaded
  aircoding run [dir] [options]   run headless: the requirement is read from stdin
  aircoding demo [options]        run the offline demo on the bundled C++ sample (scripted model)
  aircoding init [dir]            detect the project's toolchain, run the baseline once, write toolchain.json
  aircoding doctor [dir]          check the engine, the plugin, the toolchain and the model
  aircoding status [dir]          the run's tasks, budgets and what it waits for (--json, --lang)
  aircoding events [dir]          the event log as readable lines (--follow, --json, --lang)
  aircoding dashboard [dir]       a live web page of the run on 127.0.0.1 (--port N; --host H --token T)
  aircoding metrics [dir]         the run's metrics for Prometheus on 127.0.0.1 (--port N; --host H --token T)
  aircoding traces export [dir]   send the run's trace to an OpenTelemetry collector again (--run ID)
  aircoding knowledge list [dir]  the repair patterns and setup steps runs have learned (show, forget, setup)
  aircoding <command> --help      help for one command

Exit codes (every command): 0 done, 1 error (a usage error — an unknown command or flag, said in one
line with the nearest known one —, a bad config.json or toolchain.json, a pre-flight problem — each said
in one line with its fix), 2 the run waits for you (a plan to confirm, a question) or is blocked.

Options for the TUI:
  --scripted FILE   use the scripted model with this scenario (offline; for demos and tests)
  -h, --help        this help
`,
  run: `aircoding run — run a requirement headless, to the end

Usage:
  aircoding run [dir] [--yes] [--json] [--exit-on-question] [--scripted FILE] < requirement.txt
  aircoding run [dir] --resume [--json] [--exit-on-question] [--scripted FILE]
  aircoding run [dir] --resume --answer "yes" | --answer "change: <what to change>"
  aircoding run [dir] --resume --answer "<answer>" | --answer "<question id>: <answer>"
  aircoding run [dir] --init-git [--yes] [--json] < requirement.txt
  aircoding run [dir] --new [--yes] [--json] < requirement.txt

Reads the requirement from stdin and gives it to the main agent in dir (default: .).
  --resume          continue the run in progress (after a crash or a kill) from its event log; no stdin
  --answer TEXT     with --resume: answer the plan a run stopped at; "yes" confirms it, "change: …" sends
                    your change to the Architect, who proposes again (the run stops again with exit 2).
                    Else it answers an open question in your words ("retry", "skip T-2", "go on"): the
                    oldest, or the one whose id starts the answer ("T-2:blocked:1: retry")
  --new             archive the run that waits or was interrupted here (its log and evidence go to
                    ${AirPaths.ARCHIVE}/<run-id>/) and start this requirement as a new run
  --init-git        make dir a git repository first if it is none or has no commit:
                    git init && git add -A && git commit -m baseline && git tag air/baseline
  --yes             confirm the Architect's plan without asking
  --exit-on-question  stop at the first question (exit 2 within seconds), even while other tasks could
                    go on; without it a question stops only the tasks that wait on its answer, the rest
                    of the run goes on, and the run exits 2 once nothing can move without you
  --json            print a JSON summary on stdout instead of the text answer
  --scripted FILE   use the scripted model with this scenario instead of your configured model
Before the engine starts, a pre-flight check refuses (exit 1, one line each with the fix): a directory
that is not a git repository or has no commit, a detached HEAD, tracked files with uncommitted changes,
an invalid ${AirPaths.CONFIG} or toolchain.json, a lock held by another run, an empty or over-large
requirement (256 KB), a run here that waits for an answer or was interrupted (answer it with --resume,
or start again with --new). With no git identity, commits are made as AirCoding <aircoding@localhost>.
Exit codes, from the Scheduler's state (never from the main agent's last turn): 0 every task merged and
the final check passed; 2 the run waits for you (a plan to confirm, a question, a blocked task, a failed
baseline) once nothing else can move without you — every question is printed with the command that answers
it, with what merged meanwhile (and in --json) —; 1 an error
that left the work undone, or a usage error. When the main agent's turn ends while the run is at work, or
its model gives no answer for inactivityMs before a run begins, it is started again (twice at most); a
first turn that starts nothing is told once to call air_submit.
`,
  doctor: `aircoding doctor — check that AirCoding can run here

Usage:
  aircoding doctor [dir] [--json]

Checks, each with a one-line fix: the engine binary and its version, the engine pin, the config
dirs (so start-up never waits on an offline install), AirCoding's agents and tools loaded into the
engine, git and its identity, cmake, ctest, cppcheck, and a configured model. Exit code 1 if a check fails.
`,
  init: `aircoding init — set the project up for AirCoding's gates

Usage:
  aircoding init [dir] [--from-build DIR] [--jobs N] [--no-baseline] [--redetect] [--json]

Detects the build (CMakePresets.json, CMake with Ninja, Meson, a Makefile), the parallelism, the
compiler cache (ccache, shared by every worktree) and the submodules; runs the baseline once on HEAD
(build, tests, cppcheck; timed) and writes ${AirPaths.TOOLCHAIN_RULES}, saying what and why.
  --from-build DIR  reuse the CMake options of your own build directory (its CMakeCache.txt)
  --jobs N          parallel build and test jobs (default: the machine's cores)
  --no-baseline     write the rules without running the baseline
  --redetect        detect again even if toolchain.json exists (its cache settings are kept)
Exit code 1 if the baseline is not green.
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
