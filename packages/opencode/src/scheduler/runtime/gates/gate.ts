import type { ZodType } from "zod"
import type { FailureRoute } from "../../core/gate-route.ts"
import type { TaskKind } from "../../core/task.schema.ts"
import type { Worktrees } from "../git/worktree.ts"
import type { Exec } from "../exec/exec.ts"
import type { Results } from "../results/index.ts"
import type { Toolchain } from "../toolchain/index.ts"
import type { Finding, GateResult, Requirement } from "./schema.ts"

/** What a gate is and what it is given: the one shape every gate file implements (the registry lists them). */

/**
 * Where a failure goes: the Debugger (the code is wrong), the Executor (the work is not handed in right),
 * or a person (something only they can fix). The core's vocabulary (`core/gate-route.ts`): the runtime writes
 * the failed gate's route in `gates.failed`, and the machine decides by it, knowing no gate ids.
 */
export type Route = FailureRoute

/** A write-set entry as the write-set gate reads it. */
export type WriteSetEntry = { path: string; action: "create" | "modify" | "delete" | "keep" }


/** A gate: its static facts (id, whether it runs a tool, where its failure goes) and what it does. */
export interface Gate<Id extends string = string> {
  /** Spelled only here: the gate's name in report.json and events; its words for people are `gate.<id>` in text/words.ts (the id when absent). */
  readonly id: Id
  /**
   * A gate that runs a tool (the build, the tests, an analyser). When it had nothing to run, the pass
   * message says so. A gate without the flag is bookkeeping (commit, diff, the write-set, the secret scan, evidence).
   */
  readonly reportsNotRun?: boolean
  /** The evidence kind this gate collects (a name of its own: "build", "coverage"); see `requiredFor`. */
  readonly provides?: Requirement
  /**
   * The task kinds that cannot pass without this gate's evidence: the evidence gate fails such a task when this
   * gate did not run and pass, and the machine checks it in `gates.passed` (`requires`). Only with `provides`.
   */
  readonly requiredFor?: readonly TaskKind[]
  /** Where a failure of this gate goes: the pipeline writes it in the report, the runtime in `gates.failed`. */
  readonly route: Route
  /**
   * The task field this gate reads (a ui or service task's program: how to start it, what to check) and its shape:
   * the plan is refused, naming the field, when a task of a kind this gate is `requiredFor` has it wrong.
   */
  readonly program?: { readonly field: "ui" | "service"; readonly schema: ZodType }
  /** Files this gate writes in the evidence directory; cleared before every run. */
  readonly logs?: readonly string[]
  /**
   * "build": the gate builds or runs what was built (the build, the tests, the analysers reading the build's
   * compile_commands.json, the program captures), so it runs in the build tree: a build slot at the task branch's
   * tip when the runtime gives slots (`RunInput.buildIn`), whose build directory is kept between tasks, so the
   * build is incremental. Without the flag a gate reads the task's own worktree and branch.
   */
  readonly tree?: "build"
  /**
   * Runs the gate. A failure the task's authors can act on is a returned `failure` (its message already
   * parsed from the tool's output: first error, failing tests, findings); a gate that cannot reach a verdict
   * throws (the pipeline tags it: `GateError`).
   */
  run(ctx: GateContext): Promise<GateOutcome>
  /**
   * Words only: why this gate's evidence is missing, for the message of a task that requires it. Whether it is
   * missing is the one rule's (`missingEvidence` in core/required-evidence.ts), never this function's.
   */
  missingEvidence?(ctx: GateContext, result: GateResult | undefined): string | undefined
}

export interface GateOutcome {
  /** False when there was nothing to run (skipped, no command, no file to analyse). */
  ran: boolean
  /**
   * With `ran: false`: the change held nothing this gate checks (no C/C++ file for an analyser). The evidence it
   * provides is then satisfied as not applicable (core/required-evidence.ts); a gate merely switched off or
   * missing its tool never says so.
   */
  notApplicable?: boolean
  summary: string
  logPath?: string
  failure?: Failure
  /** The recorded result this gate reused instead of running (runtime/results/). */
  reused?: Results.Reused
}

export interface Failure {
  /** The failure's id when it is not the gate's own (`TOOL_MISSING`). */
  gate?: string
  summary: string
  /** For people and the Debugger: what failed, where, the first relevant lines, what to do. */
  message: string
  missingTool?: string
}

/** Runs a program (`exec/exec.ts`, where the sandbox, the jobs and verify/ take it from). */
export type { Exec } from "../exec/exec.ts"

export interface GateContext {
  readonly root: string
  /** Where this gate runs: the task's worktree, or for a gate with `tree: "build"` the build tree (a slot). */
  readonly worktree: string
  readonly taskId: string
  readonly base: string
  readonly kind: string
  readonly rules: Toolchain.Rules
  /** Where the rules came from, for people. */
  readonly toolchainNote: string
  readonly evidenceDir: string
  /** Environment of build, test and analysis commands. */
  readonly env: NodeJS.ProcessEnv
  /** "task T-1": how messages name the task. */
  readonly label: string
  readonly requires: readonly Requirement[]
  readonly signal?: AbortSignal
  /** The registry this run uses (the evidence gate asks the gate that provides each requirement). */
  readonly gates: readonly Gate[]
  /** Results of the gates that ran before this one, in order. */
  readonly results: readonly GateResult[]
  /** Files the task changed against its base: set by the diff gate, read by later gates. */
  changed: Worktrees.Change[]
  /** Analysis findings, kept in the report. */
  findings: Finding[]
  /** The baseline the test gate judges against: tests that already failed there are inherited, not blamed. */
  readonly baseline?: TestBaseline
  /** Failing tests the test gate found inherited from the baseline (kept in the report, shown in the views). */
  inheritedTests: string[]
  /** The task's write-set (the write-set gate); absent when the caller gave none. */
  readonly writeSet?: readonly WriteSetEntry[]
  /** A ui or service task's program fields, as the plan gave them (the gate that reads one checks its shape). */
  readonly program?: { readonly ui?: unknown; readonly service?: unknown }
  /** Runs a program (the process runner, or a sandbox around it). */
  exec: Exec
  /** Whether `exec` runs commands in the OS sandbox: part of the results key; absent, results are neither reused nor recorded. */
  readonly sandboxed?: boolean
  /** Writes `name` in the evidence directory and returns its path; a failure is `EvidenceWriteFailed`. */
  write(name: string, data: string): Promise<string>
}

/** What the test gate needs of the run's baseline (`runtime/baseline.ts`): its commit and the tests failing there. */
export interface TestBaseline {
  readonly commit: string
  readonly failingTests: readonly string[]
}
