import { z } from "zod"

/** Bumped whenever a file on disk (task-graph.json, events.jsonl, scheduler-state.json) changes shape. */
export const SCHEMA_VERSION = 1 as const

export const TASK_KINDS = ["code", "test", "docs", "build", "refactor", "fix", "verify", "ui", "service"] as const
export type TaskKind = (typeof TASK_KINDS)[number]

/**
 * What the plan must say of a task of each kind: `verify` re-checks merged work, so it changes no files. Which
 * evidence a kind needs before review is not here: each gate declares the evidence it `provides` and the kinds it is
 * `requiredFor` (scheduler/runtime/gates/), the runtime carries what it required in `gates.passed` (`requires`),
 * and the machine checks the evidence against it (`requiredEvidence` in required-evidence.ts).
 */
export const KIND_RULES: Record<TaskKind, { needsWriteSet: boolean; program?: "ui" | "service" }> = {
  code: { needsWriteSet: true },
  // A program whose window (ui) or wire (service) is the evidence: the task says how to start it and what to check,
  // in the field of its kind's name; the gate that provides that evidence reads the field and checks its shape.
  ui: { needsWriteSet: true, program: "ui" },
  service: { needsWriteSet: true, program: "service" },
  fix: { needsWriteSet: true },
  refactor: { needsWriteSet: true },
  test: { needsWriteSet: true },
  build: { needsWriteSet: true },
  docs: { needsWriteSet: true },
  verify: { needsWriteSet: false },
}

export const TASK_STATUSES = [
  "pending",
  "running",
  "gating",
  "debugging",
  "reviewing",
  "consulting",
  "merge_queued",
  "merging",
  "merged",
  "blocked",
  "invalidated",
] as const
export type TaskStatus = (typeof TASK_STATUSES)[number]

export const WRITE_ACTIONS = ["create", "modify", "delete", "keep"] as const

export const WriteEntry = z
  .object({
    path: z.string().describe("repository-relative posix path, e.g. src/parser.cpp"),
    action: z.enum(WRITE_ACTIONS).describe("what the task does to this file; keep = must stay as it is"),
    region: z
      .string()
      .min(1)
      .optional()
      .describe('part of the file the task touches: a function or class name, or a line range like "L10-L40"'),
  })
  .strict()
export type WriteEntry = z.infer<typeof WriteEntry>

export const TaskNode = z
  .object({
    id: z.string().describe("plain name: letters, digits, _ . -; e.g. T-1"),
    title: z.string().min(1),
    kind: z.enum(TASK_KINDS),
    phase: z.number().int().min(1).default(1),
    deps: z.array(z.string()).default([]),
    writeSet: z.array(WriteEntry).default([]),
    keep: z.array(z.string()).default([]).describe("keep-constraints: behaviour or interfaces that must not change"),
    doneWhen: z.string().describe("observable condition that makes the task done; required"),
    validation: z.array(z.string()).default([]).describe("commands that check the task"),
    adrRefs: z.array(z.string()).default([]),
    files: z.array(z.string()).optional().describe("files to read first"),
    ui: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("ui tasks only: how to start the program from the build and what its window must show (command, args, checks); see the ui gate"),
    service: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("service tasks only: how to start the service from the build, its ports and the probe with the output it must give; see the service gate"),
    status: z.enum(TASK_STATUSES).optional(),
  })
  .strict()
export type TaskNode = z.infer<typeof TaskNode>
export type TaskNodeInput = z.input<typeof TaskNode>

export const TaskGraph = z
  .object({
    schemaVersion: z.literal(SCHEMA_VERSION),
    requirement: z.string().optional(),
    tasks: z.array(TaskNode),
    /** The Architect's mark: the run is done only once the merged build is deployed and verified on every target (deploy.json). */
    deployable: z.boolean().optional(),
    /**
     * The Architect's mark on phases: once every task of one of these phases is merged (and its milestone
     * review passed), the merged build is deployed and verified on every target before the next phase
     * starts. A plan with such a phase is deployable at its end too.
     */
    deployPhases: z.array(z.number().int().min(1)).optional(),
  })
  .strict()
export type TaskGraph = z.infer<typeof TaskGraph>
export type TaskGraphInput = z.input<typeof TaskGraph>
