import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { TaskNode } from "../../core/task.schema"
import { RepairPatterns } from "../../../knowledge/patterns"
import type { TaskRuntime } from "../../core/state"
import { Looks } from "../../../agent/looks"
import type { Roles } from "../../../agent/roles"
import { Vocabulary } from "../../../agent/vocabulary"
import { requiredEvidence } from "../gates/registry"
import type { OverflowCarry } from "./overflow-carry"
import { UiSkill } from "./ui-skill"
import { HouseRules } from "../house/rules"
import { uiSkillRef } from "../../core/report.schema"
import { AirPaths } from "../../core/air-paths"

/**
 * The prompts the Scheduler's code writes for each session it starts. A worker gets everything it
 * needs in its first message — the task, its write-set and constraints, the ADRs it cites, what
 * failed before — so it never has to ask the Scheduler and never guesses. First lines are stable
 * ("Task <id>: <title>") because scenario files and people scan for them.
 */
export namespace ContextPack {
  export function adrText(root: string, id: string): string {
    const file = AirPaths.adrs(root, `${id}.md`)
    return existsSync(file) ? readFileSync(file, "utf8").trim() : `(${id} not found in ${AirPaths.ADRS}/)`
  }

  function taskBlock(root: string, task: TaskNode): string[] {
    const lines = [`Task ${task.id}: ${task.title}`, `Kind: ${task.kind} · phase ${task.phase}`]
    lines.push("", "Write-set (the only files you may change):")
    for (const w of task.writeSet) lines.push(`- ${w.path} (${w.action}${w.region ? `, region: ${w.region}` : ""})`)
    if (task.writeSet.length === 0) lines.push("- (none: this task changes no files)")
    if (task.keep.length) lines.push("", "Keep-constraints (must still hold when you finish):", ...task.keep.map((k) => `- ${k}`))
    lines.push("", `Done when: ${task.doneWhen}`)
    if (task.validation.length) lines.push("", "Validation commands:", ...task.validation.map((v) => `- ${v}`))
    if (task.files?.length) lines.push("", "Read first:", ...task.files.map((f) => `- ${f}`))
    for (const ref of task.adrRefs) lines.push("", `${ref}:`, adrText(root, ref))
    return lines
  }

  function history(rt: TaskRuntime | undefined): string[] {
    if (!rt) return []
    const lines: string[] = []
    if (rt.lastFailure)
      lines.push(
        "",
        `What failed before (${rt.lastFailure.source}):`,
        rt.lastFailure.message,
        ...(rt.lastFailure.evidencePath ? [`Evidence: ${rt.lastFailure.evidencePath}`] : []),
      )
    if (rt.findings.length) lines.push("", "Review findings to address:", ...rt.findings.map((f) => `- ${f}`))
    return lines
  }

  /** What a worker's first message is made from: the task, its worktree and what earlier sessions left. */
  export type WorkerInput = {
    root: string
    task: TaskNode
    rt: TaskRuntime | undefined
    worktree: { path: string; branch: string }
    attempt: number
    /** Uncommitted changes an earlier session left in the worktree, saved as a patch before this one starts. */
    setAside?: { files: string[]; patch: string; commit: string }
    /** The branch's commits from earlier sessions of this task, newest first. */
    earlier: string[]
    /** The session before this one ran out of the model's context: what the worktree holds (sessions/overflow-carry.ts). */
    overflow?: OverflowCarry.Carry
  }
  /** A worker role's context pack: its first message. */
  export type WorkerPack = (input: WorkerInput) => string

  /**
   * The message every worker pack is built on: the task, what failed before, then the role's own `intro`, what
   * earlier sessions left (patch, commits), then the role's `after` lines.
   */
  export function workerMessage(input: WorkerInput, intro: string[], after: string[] = []): string {
    const { root, task, rt, worktree, setAside, earlier } = input
    const leftover = setAside
      ? [`An earlier session of this task stopped with uncommitted changes to ${setAside.files.length} file(s); they are saved in ${setAside.patch} and the worktree was reset to ${worktree.branch} at ${setAside.commit.slice(0, 12)}: start from the committed work.`]
      : []
    const committed = earlier.length
      ? [`The branch already holds ${earlier.length} commit(s) from earlier sessions of this task (newest first); build on them, do not add again what they added:`, ...earlier.map((c) => `- ${c}`)]
      : []
    return [...taskBlock(root, task), ...history(rt), "", ...intro, ...leftover, ...committed, ...(input.overflow ? overflowLines(input.overflow) : []), ...after].join("\n")
  }

  /**
   * What a fresh session after a context overflow is told: why it is fresh, the task's diff so far (cut), and
   * the overflowed Debugger's steps; and to keep this conversation short, or it ends the same way.
   */
  function overflowLines(carry: OverflowCarry.Carry): string[] {
    const lines = [
      "",
      "The session before this one ran out of the model's context and was ended; you are its fresh replacement. Nothing of its work",
      "is lost: it is in the worktree. Keep this conversation short: read files in parts, do not print whole logs, and report as soon as the work is done.",
    ]
    if (carry.stat.length === 0) lines.push("", `The task's branch holds no change against ${carry.base} yet.`)
    else {
      lines.push("", `The task's diff so far (against ${carry.base}):`, ...carry.stat.map((l) => `  ${l}`))
      lines.push("", "```diff", carry.diff.trimEnd(), "```")
      if (carry.diffCut) lines.push(`(the diff is cut at ${carry.diff.length} of ${carry.diffChars} characters: run \`git diff ${carry.base}...HEAD -- <file>\` for the rest, one file at a time)`)
    }
    if (carry.steps.length) lines.push("", "The steps the previous Debugger session took (evidence it collected), oldest first:", ...carry.steps.map((step) => `- ${step}`))
    return lines
  }

  function executor(input: WorkerInput): string {
    const { task, worktree, attempt } = input
    const intro =
      task.kind === "verify"
        ? [
            `You are the executor of this verify task (attempt ${attempt}). Your git worktree is ${worktree.path} on branch ${worktree.branch}: the integration branch as it is now.`,
            "Change nothing and commit nothing: check that \"Done when\" still holds there — run the validation commands, build and",
            "run the tests — then call air_report with what you checked. The Scheduler runs the build and tests itself too. If it",
            "does not hold, call air_report with `blocked` and the evidence: the user and the Architect decide what changes.",
          ]
        : [
            `You are the executor of this task (attempt ${attempt}). Your git worktree is ${worktree.path} on branch ${worktree.branch}.`,
            "Work only there and only on this task. Commit as you go (git add, git commit). When the work is committed,",
            `call air_report: it asks the Scheduler to run the gates (${Vocabulary.gates()}); a ${task.kind} task must have`,
            `their evidence of ${requiredEvidence(task.kind).join(", ") || "nothing"} before review. If you cannot finish,`,
            "call air_report with `blocked` — never a temporary or fallback shortcut. If the plan itself is wrong (a missing",
            "dependency, a file outside your write-set, an interface that does not exist), say so in `planIssue`: the Architect fixes the plan.",
          ]
    return workerMessage(input, intro, [...lookLines(task.kind, "before you change code, and again before you report"), ...skillLines(input.root, task)])
  }

  /** A ui task's session is told the UI design skill; without the skill file it does not start (UiSkill.Missing). */
  export function skillLines(root: string, task: TaskNode): string[] {
    return task.kind === "ui" ? UiSkill.lines(root) : []
  }

  /** A ui or service task's worker is told its look (agent/looks.ts): the gate's own capture or probe, on its worktree. */
  function lookLines(kind: string, when: string): string[] {
    const tool = Looks.ofKind(kind)
    if (!tool) return []
    const what = tool === "air_capture" ? "its window (the ui-capture gate's capture)" : "its service (the service-probe gate's probe)"
    return [`This is a ${kind} task: look at ${what} with ${tool} ${when}; it builds your worktree and answers PASSED or FAILED with the evidence.`]
  }

  function debuggerPack(input: WorkerInput): string {
    const { root, task, worktree, attempt } = input
    const intro = [
      `You are the debugger of this task (attempt ${attempt}). The gates failed; the worktree ${worktree.path} (branch ${worktree.branch}) holds the executor's work.`,
      "Collect evidence first (run the failed gate's command, or read the evidence file), then test one hypothesis at",
      "a time. The gates built in a build directory of their own, so your worktree has no build of theirs: build before",
      "you run a test (the failure's message gives the one command that builds and reproduces it).",
      "Commit the fix, then call air_report with what you found and changed.",
    ]
    // A Debugger hears of repairs that fixed the same failure before (this project's, and the user's when shared).
    return workerMessage(input, intro, [
      ...lookLines(task.kind, "before you change code (a FAILED look is your reproduction) and after your last edit (a PASSED look is your verification)"),
      ...RepairPatterns.contextLines(root, task.id),
      ...skillLines(root, task),
    ])
  }

  /**
   * Each worker role's context pack, beside the row that makes it a worker (`confined: true` in agent/roles.ts):
   * a worker row without its pack here does not compile. A test lays its own beside these (`{ ...WORKER_PACKS, … }`).
   */
  export const WORKER_PACKS: Readonly<Record<Roles.Worker, WorkerPack>> = { executor, debugger: debuggerPack }
  export type Packs = Readonly<Record<string, WorkerPack>>

  /** The pack of a worker role, from `packs` (default: the shipped ones). */
  export function packOf(role: string, packs: Packs = WORKER_PACKS): WorkerPack | undefined {
    return Object.hasOwn(packs, role) ? packs[role] : undefined
  }

  /** The first message of a shipped worker role's session. */
  export function worker(
    root: string,
    role: Roles.Worker,
    task: TaskNode,
    rt: TaskRuntime | undefined,
    worktree: { path: string; branch: string },
    attempt: number,
    setAside?: WorkerInput["setAside"],
    earlier: string[] = [],
  ): string {
    return WORKER_PACKS[role]({ root, task, rt, worktree, attempt, ...(setAside ? { setAside } : {}), earlier })
  }

  /** `evidence`: a ui or service task's program evidence (EvidencePack.forReview), after the task and before the instructions. */
  export function reviewer(root: string, task: TaskNode, worktree: string, rt?: TaskRuntime, evidence: readonly string[] = [], overflow?: OverflowCarry.Carry): string {
    // A second review checks that what the first one found was fixed, not only the new diff.
    const earlier = rt && rt.reviewRuns > 1 && rt.findings.length > 0 ? ["", `This is review ${rt.reviewRuns}; an earlier review found (check that each is fixed):`, ...rt.findings.map((f) => `- ${f}`)] : []
    return [
      `Review task ${task.id}: ${task.title}`,
      "",
      ...taskBlock(root, task).slice(1),
      ...earlier,
      ...evidence,
      "",
      `The task's worktree is ${worktree}. Call air_diff for the diff and the gate evidence, read what you need, then`,
      "report with air_review: the code-to-design table first (one row per design point above), then the checklist, every",
      `row of it — ${Vocabulary.checklistLabels()} — each not-applicable, checked,`,
      'or a finding with file and line; then static analysis, then tests. "Tests pass" alone is never a pass.',
      'A verdict of "block-release" stops the merge and asks the Architect: use it when the change must not land whatever the executor does.',
      ...loggingRuleLines(root),
      ...(task.kind === "ui" ? uiRowLines(root) : []),
      ...skillLines(root, task),
      ...(overflow ? reviewOverflowLines(overflow) : []),
    ].join("\n")
  }

  /** What the checklist's logging rows are judged against: the house rule's library and calls, or none (the rows are not-applicable). */
  function loggingRuleLines(root: string): string[] {
    let rule: HouseRules.LoggingRule | undefined
    try {
      rule = HouseRules.load(root)?.logging
    } catch (err) {
      // Checked before the run (preflight); edited badly since, it must not keep the review from starting.
      return ["", `The house rules could not be read (${(err as Error).message}): judge the checklist's logging rows by the logging the project already has.`]
    }
    if (!rule) return ["", `The house rules (${HouseRules.RULES_PATH}) name no logging library: answer the checklist's logging rows not-applicable.`]
    const calls = rule.calls.length ? `, logging through ${rule.calls.join(", ")}` : ""
    return ["", `The house rules (${HouseRules.RULES_PATH}) name ${rule.library} as the one logging library${calls}: judge the checklist's logging rows against it.`]
  }

  /** A ui task's review answers each section of the skill it is given; the core refuses one without (review-rules.ts). */
  function uiRowLines(root: string): string[] {
    return [
      "",
      "This is a ui task: add the ui rows to the code-to-design table, one per section of the UI design skill below, judged on the capture and the diff;",
      "a review without all of them is refused. Their designRefs:",
      ...UiSkill.sections(root).map((section) => `- ${uiSkillRef(section)}`),
    ]
  }

  /** A fresh Reviewer after an overflow: the files of the change, and to read them one at a time (air_diff gives the whole diff). */
  function reviewOverflowLines(carry: OverflowCarry.Carry): string[] {
    return [
      "",
      "The review session before this one ran out of the model's context and was ended; you are its fresh replacement. Keep this",
      "conversation short: read the changed files in parts rather than all at once, and report as soon as the table is filled.",
      ...(carry.stat.length ? [`The files the change touches (against ${carry.base}):`, ...carry.stat.map((l) => `  ${l}`)] : []),
    ]
  }

  /** `root`: when the requirement asks for ui work, the Architect plans it with the UI design skill at hand. */
  export function architect(requirement: string, autoConfirm: boolean, root?: string): string {
    return [
      "Requirement:",
      requirement,
      "",
      "Study the repository (read-only), then propose a plan with air_propose.",
      autoConfirm
        ? "This run is headless and pre-confirmed: after air_propose, write the task graph with air_plan right away."
        : "Then stop: the user must confirm through Main before air_plan is accepted; you will be prompted again.",
      ...(root !== undefined && UiSkill.asksForUi(requirement) ? ["", "The requirement asks for ui work: plan its ui tasks (windows, layouts, checks) by the skill below.", ...UiSkill.lines(root)] : []),
    ].join("\n")
  }

  /** A new Architect session for a plan the user already answered (the old session died with its process). */
  export function architectAgain(requirement: string, summary: string, answer: { confirmed: true; notes?: string } | { confirmed: false; revision: string }): string {
    return [
      "Requirement:",
      requirement,
      "",
      "Your proposed plan (air_propose):",
      summary,
      "",
      answer.confirmed
        ? `The user confirmed this plan${answer.notes ? ` (they said: ${answer.notes})` : ""}. Study the repository as far as you need (read-only), then write the task graph with air_plan.`
        : revisionText(answer.revision),
    ].join("\n")
  }

  /** What the Architect is told when the user asks for changes to its proposal. */
  export function revisionText(revision: string): string {
    return [
      `The user asked for changes to your proposed plan, in their words: "${revision}"`,
      "Revise the plan accordingly (record a changed decision with air_adr), then propose it again with air_propose and end your turn: the user confirms or asks for more changes. Do not call air_plan before the confirmation.",
    ].join("\n")
  }

  /** What the Architect is told when the user confirms its proposal. */
  export function confirmedText(notes?: string): string {
    return `The user confirmed the plan${notes ? ` (they said: ${notes})` : ""}. Write the task graph now with air_plan.`
  }

  export function consult(taskId: string, question: string, options: string[], agent: "scheduler" | "architect"): string {
    return [
      `Consult on task ${taskId}:`,
      question,
      "",
      "Options (choose exactly one with air_decide):",
      ...options.map((o) => `- ${o}`),
      "",
      agent === "architect"
        ? [
            `You decide before the user is asked. Read the task's evidence in ${AirPaths.EVIDENCE}/${taskId}/, the task graph and the ADRs.`,
            "When the plan is wrong (a missing dependency, a write-set that misses a file, an interface that does not exist), answer with air_delta instead of an option: the delta applies at once and the task runs again on the new plan.",
            "A decision the code must follow goes into an ADR (air_adr), then choose an option. Choose \"block\" only for what needs the user: it puts one precise question to them.",
          ].join("\n")
        : `"block" means no option is right: the Architect is consulted next, then the user.`,
    ].join("\n")
  }

  /** Everything the Architect needs to write a plan delta: the change, the graph as it runs, the ADRs in force. */
  export function change(root: string, text: string, graph: { tasks: TaskNode[] } | null, statusOf: (id: string) => string | undefined): string {
    const lines = ["Requirement change:", text, "", "Current task graph (id · status · phase · kind · title · write-set · ADRs):"]
    for (const t of graph?.tasks ?? [])
      lines.push(
        `- ${t.id} · ${statusOf(t.id) ?? "pending"} · phase ${t.phase} · ${t.kind} · ${t.title} · ${t.writeSet.map((w) => `${w.path}(${w.action})`).join(", ") || "no files"}${t.adrRefs.length ? ` · ${t.adrRefs.join(", ")}` : ""}${t.deps.length ? ` · after ${t.deps.join(", ")}` : ""}`,
      )
    const dir = AirPaths.adrs(root)
    const adrs = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".md")).sort() : []
    lines.push("", "ADRs:")
    if (adrs.length === 0) lines.push("- (none)")
    for (const f of adrs) {
      const text = readFileSync(join(dir, f), "utf8")
      const status = /^Status:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? "unknown"
      lines.push(`- ${f.replace(/\.md$/, "")} (${status}): ${text.split("\n")[0]!.replace(/^#\s*/, "")}`)
    }
    lines.push(
      "",
      "Write a plan delta against this graph with air_delta: add the new tasks, remove or modify the ones the change",
      "makes wrong, and list in supersedesAdrs every ADR the change replaces (write the new ADR first with air_adr,",
      "with `supersedes`). The Scheduler invalidates exactly the tasks the delta reaches: running ones are aborted",
      "(their worktrees kept for reference), merged ones are reverted by their air/done tag. A merged task that must",
      "be redone gets a new id in `add` (and its old id in `remove`). Leave every other task alone.",
    )
    return lines.join("\n")
  }

  export function milestone(
    phase: number,
    requirement: string,
    tasks: TaskNode[],
    /** `captures`: the final review's section on every ui and service task's evidence (EvidencePack.forFinalReview). */
    opts: { final?: boolean; adrs?: string[]; answer?: string | null; captures?: readonly string[] } = {},
  ): string {
    const adrs = opts.adrs ?? []
    return [
      opts.final
        ? `Final milestone review of phase ${phase}: the final review of the whole requirement before the run is done.`
        : `Milestone review of phase ${phase}.`,
      "",
      "Requirement:",
      requirement,
      "",
      opts.final ? "Merged tasks (the whole run):" : "Merged tasks of this phase:",
      ...tasks.map((t) => `- ${t.id}: ${t.title} (done when: ${t.doneWhen})${t.adrRefs.length ? ` · ${t.adrRefs.join(", ")}` : ""}`),
      "",
      "ADRs:",
      ...(adrs.length ? adrs.map((a) => `- ${a}`) : ["- (none)"]),
      ...(opts.captures ?? []),
      ...(opts.answer ? ["", `This review kept failing, so the user was asked. Their answer: ${opts.answer}`] : []),
      "",
      opts.final
        ? "Check the integration branch against the whole requirement and every ADR, then report with air_milestone: pass (the run is done), or fail with findings and the fix tasks that close the gaps."
        : "Check the merged code against the requirement and the ADRs, then report with air_milestone (pass, or fail with fix tasks).",
    ].join("\n")
  }

  /** An accepted ADR's file was edited: the Architect says whether the decision changed. */
  export function adrEdit(adr: string, before: string | null, after: string, cited: string[]): string {
    return [
      `${adr} was edited after it was accepted.`,
      "",
      "As accepted:",
      before ?? "(no copy was kept; compare with the tasks below)",
      "",
      "As it is now:",
      after,
      "",
      "Tasks citing it (id · status · title):",
      ...(cited.length ? cited : ["- (none)"]),
      "",
      "Classify the edit with air_decide: choice \"clarification\" if the decision stands (wording, detail, an example) —",
      "it is only recorded; or \"decision-change\" if what the tasks must do changed — merged tasks citing it are",
      "re-verified against it, work in flight on it is redone, pending tasks read it when they start. The reason is shown to the user.",
    ].join("\n")
  }
}
