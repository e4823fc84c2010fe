/**
 * Which end-to-end files run in CI's soak stage (`./start.sh soak`) instead of the suite (`./start.sh test`).
 * The suite is the loop a developer waits on and must stay under 10 minutes on two cores (issue 42 item 6);
 * CI runs both stages, so every file still runs on every submission. A file moves here when it is slow and
 * proves a path of faults or long runs that the suite's faster end-to-end files already enter: the person's
 * paths (the TUI, the demo, confirm, the program tasks) stay in the suite. Three TUI files are steps of the soak of their
 * own, skipped unless their variable is set (bench/soak.ts sets it): the screens' goldens (test/tui/screens.e2e.test.ts,
 * AIR_TUI_SCREENS=1), and every path of the demo through the plan with status after a quit or a kill
 * (test/tui/paths.e2e.test.ts and quit-status.e2e.test.ts, AIR_TUI_PATHS=1).
 */
export const SOAK_FILES: readonly string[] = [
  // Main's provider holding its first request past the engine's header timeout (151 s).
  "packages/opencode/test/e2e/main-silence.test.ts",
  // A headless run ending on the Scheduler's state while Main never ends its turn (110 s).
  "packages/opencode/test/e2e/headless-end.test.ts",
  // Runtime faults: an invalid toolchain, a vanished worktree, a full disk (100 s).
  "packages/opencode/test/e2e/faults.test.ts",
  // Main's turn ending before the run does, twice side by side (95 s).
  "packages/opencode/test/e2e/main-turn-ends.test.ts",
  // A requirement change mid-run that reverts a merged task (75 s).
  "packages/opencode/test/e2e/change.test.ts",
  // Status after a SIGKILL of the whole run (67 s).
  "packages/opencode/test/e2e/status-after-kill.test.ts",
  // An accepted ADR edited by hand mid-run (58 s).
  "packages/opencode/test/e2e/adr-edit.test.ts",
  // Replanning from the field (53 s).
  "packages/opencode/test/e2e/field-loop.test.ts",
  // The peers' complaints as one run: false done, a failing test, a stuck worker (48 s).
  "packages/opencode/test/e2e/trials.test.ts",
  // The launcher killed alone between an edit and its commit (44 s).
  "packages/opencode/test/e2e/killed-launcher.test.ts",
  // Redoing a task that already landed (41 s).
  "packages/opencode/test/e2e/redo.test.ts",
  // A repair budget spent, the Scheduler consulted (39 s).
  "packages/opencode/test/e2e/consult.test.ts",
  // Two phases with milestone reviews and fix tasks (38 s).
  "packages/opencode/test/e2e/milestone.test.ts",
  // A commit to the integration branch between phases (33 s).
  "packages/opencode/test/e2e/rebaseline.test.ts",
  // Deploy to a real sshd, with rollback (33 s).
  "packages/opencode/test/e2e/deploy.test.ts",
  // A machine with no git identity (31 s).
  "packages/opencode/test/e2e/no-identity.test.ts",
  // The README's headless flow with the shipped demo.json: plan, a change, the revised plan, yes (62 s);
  // the demo's own run and the dialog's confirmation stay in the suite.
  "packages/opencode/test/e2e/demo-paths.test.ts",
  // Traces sent to a real OTLP/HTTP receiver, re-sent, and dropped at a closed port (49 s), and a third run with
  // AIRCODING_OTEL_ENGINE=1 (866 s for the three on a machine at load 29: not a figure for an idle one).
  "packages/opencode/test/e2e/traces.test.ts",
  // SIGKILL of the whole run at random moments, resumed again and again (137 s); tui-conversation's quit and
  // reopen keeps the resume path in the suite.
  "packages/opencode/test/e2e/resume.test.ts",
  // Two tasks that pass alone and break the build together, caught by the merge build (85 s).
  "packages/opencode/test/e2e/merge-build.test.ts",
  // Merge batches and their bisection (81 s); the runtime's merge-batch and merge-build tests stay in the suite.
  "packages/opencode/test/e2e/merge-batch.test.ts",
  // The provider's context-length error at an executor, a debugger and a reviewer (59 s).
  "packages/opencode/test/e2e/context-overflow.test.ts",
  // The money budget shared by two parallel tasks (54 s) and a task's request budget (53 s).
  "packages/opencode/test/e2e/money-budget.test.ts",
  "packages/opencode/test/e2e/budget.test.ts",
  // A Chinese speaker's TUI session: quit before answering the plan, reopen, 好, the run to the end, goldens (85 s);
  // tui-conversation (suite) keeps the quit-and-reopen path, screens.e2e (soak) the zh-CN goldens.
  "packages/opencode/test/e2e/tui-reopen-zh.test.ts",
  // AirCoding loaded into the engine, a child session, and a broken plugin failing loudly (90 s): every end-to-end
  // file of the suite loads the plugin and runs child sessions through it; the broken plugin is a fault path.
  "packages/opencode/test/e2e/foundation.test.ts",
  // A worktree the Scheduler cannot create: the dispatch retried once, then a question (30 s).
  "packages/opencode/test/e2e/dispatch-failure.test.ts",
  // SIGKILL between two edits of an attempt, resumed from the branch's last commit (27 s); status-after-kill and
  // killed-launcher (soak) and the suite's runtime tests of leftovers keep the rest of the kill path.
  "packages/opencode/test/e2e/interrupted-attempt.test.ts",
  // The pipeline and the machine agreeing on evidence for every kind and file mix, a property over real gates (57 s).
  "packages/opencode/test/runtime/evidence-agreement.test.ts",
  // go vet, staticcheck and clippy on a tiny module and crate with real go and cargo (34–54 s).
  "packages/opencode/test/runtime/analyser-go-rust.test.ts",
  // pytest, vitest, go test and cargo test read per test against the base, with the real runners (47 s quiet).
  "packages/opencode/test/runtime/test-runners.test.ts",
  // Main's and the Architect's compacted conversations checked, retried, repaired from the record (60 s).
  "packages/opencode/test/e2e/compaction.test.ts",
  // A question that stops only what waits on it, headless: exit 2, --resume --answer, --exit-on-question (84 s); the
  // suite keeps a headless run exiting 2 while it waits (e2e/input.test.ts) and the rule itself, that a question stops
  // only what waits on it and the run then exits 2 (scheduler/person-waits.table.test.ts).
  "packages/opencode/test/e2e/headless-question.test.ts",
  // Every command driven with a bad flag as a process, and the pre-flight stops (68 s): the suite keeps usage errors'
  // exit 1 in process (test/cli-view/status-events.test.ts) and the light load they exit from (cli-start.test.ts).
  "packages/opencode/test/cli/exit-codes.test.ts",
  // The webhook and its Chinese text on a real headless run (32 s); the notifier's unit tests stay in the suite.
  "packages/opencode/test/e2e/notify.test.ts",
  // Build slots under bad input: checkouts broken by hand, another compiler's CMakeCache.txt, a tmpfs that fills
  // (80 s quiet, 147 s loaded); build-slot's property test keeps the slots' own path in the suite.
  "packages/opencode/test/toolchain/slot-faults.test.ts",
  // A CMake + Python + Go + TypeScript repository through init and one run: areas, mypy's finding, a Python-only task
  // with no C++ build (96 s quiet, 293 s loaded); test/toolchain/areas.test.ts keeps the areas' rules in the suite.
  "packages/opencode/test/e2e/areas.test.ts",
  // Two real distccd daemons, one killed mid-build; doctor against live, refused and garbage-answering hosts (39–115 s).
  "packages/opencode/test/toolchain/farm.test.ts",
  // The logging rule through a whole run on the calc sample (66 s); test/house/logging-gate and integration-build
  // keep the gate and spdlog's integration in the suite.
  "packages/opencode/test/e2e/house-logging.test.ts",
  // Legacy cppcheck and clang-tidy findings inherited by a task through a whole run (56 s); the analysers' own
  // tests keep the base matching in the suite.
  "packages/opencode/test/e2e/legacy-findings.test.ts",
  // The engine check's cache across HOMEs, configs and a failing plugin (54 s), starting the engine several times.
  "packages/opencode/test/engine/verify-cache.test.ts",
  // SIGKILL of a run and of its --resume mid-capture and mid-probe, nothing left behind (375 s at load 17, 746 s at
  // load 30, on two cores); the ui and service e2e files and the capture modules' own SIGKILL tests keep the paths in the suite.
  "packages/opencode/test/e2e/program-kill.test.ts",
  // A real Prometheus scraping `aircoding metrics` while a scripted run goes on, then its end (issue 41 item 6);
  // test/dashboard/metrics.test.ts (suite) checks every metric's value on a recorded log that grows.
  "packages/opencode/test/e2e/metrics-live.test.ts",
]

/** The suite leaves the soak files out when `bun run test` runs it whole (AIR_STAGE=suite); a file named on the command line still runs. */
export function suiteExcludes(env: NodeJS.ProcessEnv, argv: readonly string[]): string[] {
  if (env.AIR_STAGE !== "suite") return []
  const named = argv.filter((a) => a.endsWith(".test.ts"))
  return SOAK_FILES.filter((f) => !named.some((n) => f.endsWith(n.replace(/^\.\//, ""))))
}
