import { readFileSync } from "node:fs"
import { Prompt } from "../agent/prompt"
import { tool, type ToolContext, type ToolDefinition, type ToolResult } from "@opencode-ai/plugin"
import { z } from "zod"
import { Strict } from "../scheduler/core/strict"
import { PlanDelta } from "../scheduler/core/delta.schema"
import { Checklist, DebugReport, PlanIssue, REVIEW_VERDICTS, ReviewRow } from "../scheduler/core/report.schema"
import { TaskNode } from "../scheduler/core/task.schema"
import { Orchestrators, type Orchestrator } from "../scheduler/runtime/orchestrator"
import { WorkerLook } from "../scheduler/runtime/looks/worker-look"
import { statusText } from "../read/status-text"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * The coordinator tools: the only way agents talk to the Scheduler. Each tool is a thin adapter —
 * arguments are checked by zod, the caller is identified by its session (never by what the model
 * claims), and the decision is the Scheduler's. Model-facing texts live in descriptions/*.txt.
 */
function describe(id: string): string {
  return Prompt.withVocabulary(readFileSync(new URL(`./descriptions/${id}.txt`, import.meta.url), "utf8").trim())
}

/** Errors go back to the model as the tool's output, never as a crash of the session loop. */
async function guarded(run: () => Promise<string>): Promise<string> {
  try {
    return await run()
  } catch (err) {
    return `Error: ${err instanceof Error ? err.message : String(err)}`
  }
}

/**
 * A look's answer: its verdict in words, and its exit code in the metadata, which the plugin's `tool.execute.after`
 * hook records for the Debugger's steps as a bash command's (agent/looks.ts). An error has no exit code.
 */
async function looked(run: () => Promise<WorkerLook.Result>): Promise<ToolResult> {
  try {
    const result = await run()
    return { output: result.text, metadata: result.exit === undefined ? {} : { exit: result.exit } }
  } catch (err) {
    return `Error: ${err instanceof Error ? err.message : String(err)}`
  }
}

function orchestratorFor(ctx: ToolContext): Orchestrator {
  return Orchestrators.forSession(ctx.sessionID) ?? Orchestrators.forRoot(ctx.worktree || ctx.directory)
}

/** Main's tools: the session calling is the one the user talks to (the TUI wakes it with news). */
function mainOrchestrator(ctx: ToolContext): Orchestrator {
  const o = orchestratorFor(ctx)
  o.noteMain(ctx.sessionID)
  return o
}

export namespace CoordinatorTools {
  export function build(): Record<string, ToolDefinition> {
    return {
      // Main
      air_submit: tool({
        description: describe("air_submit"),
        args: {
          requirement: z
            .string()
            .min(1)
            .max(Strict.MAX_REQUIREMENT_BYTES, "the requirement is too long: put long material in a file of the repository and name the file")
            .describe("the user's requirement, complete, in their words"),
        },
        execute: (args, ctx) => guarded(() => mainOrchestrator(ctx).submit(args.requirement, ctx.sessionID)),
      }),
      air_confirm: tool({
        description: describe("air_confirm"),
        args: { notes: z.string().optional().describe("what the user said when confirming, if anything") },
        execute: (args, ctx) => guarded(() => mainOrchestrator(ctx).confirm(args.notes)),
      }),
      air_status: tool({
        description: describe("air_status"),
        args: {},
        execute: (_args, ctx) =>
          guarded(async () => {
            const orchestrator = mainOrchestrator(ctx)
            const { state, lang } = await orchestrator.statusFacts()
            return statusText(orchestrator.root, lang, state)
          }),
      }),
      air_listen: tool({
        description: describe("air_listen"),
        args: {},
        execute: (_args, ctx) => guarded(() => mainOrchestrator(ctx).listen(ctx.abort)),
      }),
      air_answer: tool({
        description: describe("air_answer"),
        args: {
          questionId: z.string().min(1).describe("the id of the question, as air_listen gave it"),
          answer: z.string().min(1).describe("the user's answer"),
        },
        execute: (args, ctx) => guarded(() => mainOrchestrator(ctx).answer(args.questionId, args.answer)),
      }),
      air_change: tool({
        description: describe("air_change"),
        args: {
          text: z
            .string()
            .min(1)
            .max(Strict.MAX_REQUIREMENT_BYTES, "the change is too long: put long material in a file of the repository and name the file")
            .describe("the change to the requirement, in the user's words"),
        },
        execute: (args, ctx) => guarded(() => mainOrchestrator(ctx).change(args.text)),
      }),
      air_pause: tool({
        description: describe("air_pause"),
        args: {},
        execute: (_args, ctx) => guarded(() => mainOrchestrator(ctx).pause()),
      }),
      air_resume: tool({
        description: describe("air_resume"),
        args: {},
        execute: (_args, ctx) => guarded(() => mainOrchestrator(ctx).resumeRun()),
      }),
      // Architect
      air_propose: tool({
        description: describe("air_propose"),
        args: {
          summary: z.string().min(1).describe("the proposed plan: approach, tasks in order, what runs in parallel, risks"),
          // Loose for the same reason as air_plan's: validateGraph names a misspelt key.
          tasks: z.array(TaskNode.loose()).optional().describe("the tasks as you would write them with air_plan, so the user sees what they confirm"),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).propose(ctx.sessionID, args.summary, args.tasks)),
      }),
      air_plan: tool({
        description: describe("air_plan"),
        args: {
          // Loose here on purpose: a misspelt key (depends_on) must reach validateGraph, which refuses it with the
          // nearest known key and a bounded list; the engine's own refusal would name neither.
          tasks: z.array(TaskNode.loose()).describe("every task of the plan; see the description for the fields"),
          requirement: z.string().optional().describe("one-line restatement of the requirement"),
          deployable: z
            .boolean()
            .optional()
            .describe(`true when the run is done only once the merged build is deployed and verified on every target of ${AirPaths.DEPLOY_RULES}`),
          deployPhases: z
            .array(z.number().int().min(1))
            .optional()
            .describe("phases whose merged build is deployed and verified on every target before the next phase starts (the run then deploys at its end too)"),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).plan(ctx.sessionID, args)),
      }),
      air_delta: tool({
        description: describe("air_delta"),
        // Loose for the same reason as air_plan's tasks: validateDelta refuses unknown keys with did-you-mean.
        args: { delta: PlanDelta.loose().describe("the change to the current task graph") },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).delta(ctx.sessionID, args.delta)),
      }),
      air_adr: tool({
        description: describe("air_adr"),
        args: {
          id: z.string().regex(/^ADR-\d{1,4}$/, "an ADR id looks like ADR-1").describe("ADR-<number>"),
          title: z.string().min(1),
          status: z.enum(["proposed", "accepted", "superseded"]).default("accepted"),
          body: z.string().min(1).describe("context, decision, consequences (markdown)"),
          supersedes: z.array(z.string()).optional(),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).adr(ctx.sessionID, args)),
      }),
      air_milestone: tool({
        description: describe("air_milestone"),
        args: {
          phase: z.number().int().min(1).optional().describe("the phase under review (default: the one you were asked to review)"),
          verdict: z.enum(["pass", "fail"]),
          findings: z.array(z.string()).default([]),
          fixTasks: z.array(TaskNode).optional().describe("tasks that fix what the milestone review found"),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).milestone(ctx.sessionID, args)),
      }),
      // Executor and debugger
      air_report: tool({
        description: describe("air_report"),
        args: {
          summary: z.string().min(1).describe("what you changed and how you checked it"),
          blocked: z.string().optional().describe("only if you cannot finish: what stands in the way"),
          planIssue: PlanIssue.optional().describe("only if the plan itself is wrong: a missing dependency, a write-set that misses a file, an interface that does not exist"),
          debug: DebugReport.optional().describe("debugger only: your steps — symptom, reproduction (or notReproducible), rootCause, fix, verification"),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).report(ctx.sessionID, args)),
      }),
      air_capture: tool({
        description: describe("air_capture"),
        args: {
          command: WorkerLook.Override.shape.command.describe("only to look at another program than the task's own: its path relative to the worktree, or a name on PATH"),
          args: WorkerLook.Override.shape.args.describe("only with command, or to start the task's program with other arguments"),
        },
        execute: (args, ctx) => looked(() => orchestratorFor(ctx).look(ctx.sessionID, "air_capture", args, ctx.abort)),
      }),
      air_probe: tool({
        description: describe("air_probe"),
        args: {
          command: WorkerLook.Override.shape.command.describe("only to probe with another command than the task's probe (nc, curl, the project's client)"),
          args: WorkerLook.Override.shape.args.describe("the probe's arguments, instead of the task's"),
          input: WorkerLook.Override.shape.input.describe("what the probe writes to the service, instead of the task's input"),
        },
        execute: (args, ctx) => looked(() => orchestratorFor(ctx).look(ctx.sessionID, "air_probe", args, ctx.abort)),
      }),
      // Reviewer
      air_diff: tool({
        description: describe("air_diff"),
        args: {},
        execute: (_args, ctx) => guarded(() => orchestratorFor(ctx).diffForReview(ctx.sessionID)),
      }),
      air_review: tool({
        description: describe("air_review"),
        args: {
          verdict: z.enum(REVIEW_VERDICTS),
          rows: z.array(ReviewRow).min(1).describe("the code-to-design table: one row per design point"),
          findings: z.array(z.string()).default([]),
          checklist: Checklist.describe("the C++ risks, each answered for this diff: not-applicable, checked, or a finding with file and line"),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).review(ctx.sessionID, args)),
      }),
      // Scheduler agent
      air_decide: tool({
        description: describe("air_decide"),
        args: {
          choice: z.string().min(1).describe("exactly one of the options you were offered"),
          reason: z.string().min(1),
        },
        execute: (args, ctx) => guarded(() => orchestratorFor(ctx).decide(ctx.sessionID, args.choice, args.reason)),
      }),
    }
  }

  export const ids = Object.keys(build())
}
