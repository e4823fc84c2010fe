import { existsSync, openSync, readSync, closeSync, statSync } from "node:fs"
import { join } from "node:path"
import { Ui } from "./ui"

/**
 * Shows a headless run's progress on stderr by following the Scheduler's event log, so a long run
 * is never silent. Read-only: the engine process owns the log.
 */
export function followProgress(root: string, write: (line: string) => void = (l) => process.stderr.write(l + "\n")): () => void {
  const file = join(root, ".air", "local", "state", "events.jsonl")
  let offset = existsSync(file) ? statSync(file).size : 0
  let rest = ""
  const tick = () => {
    if (!existsSync(file)) return
    const size = statSync(file).size
    if (size < offset) offset = 0
    if (size === offset) return
    const fd = openSync(file, "r")
    const buf = Buffer.alloc(size - offset)
    readSync(fd, buf, 0, buf.length, offset)
    closeSync(fd)
    offset = size
    const lines = (rest + buf.toString("utf8")).split("\n")
    rest = lines.pop() ?? ""
    for (const line of lines) {
      try {
        const text = describeEvent(JSON.parse(line))
        if (text) write(Ui.dim(`· ${text.length > 160 ? `${text.slice(0, 157)}…` : text}`))
      } catch {
        // a torn line is completed on the next tick
      }
    }
  }
  const timer = setInterval(tick, 400)
  return () => {
    clearInterval(timer)
    tick()
  }
}

export function describeEvent(e: Record<string, any>): string | undefined {
  switch (e.type) {
    case "run.started":
      return `run ${e.runId} started`
    case "plan.proposed":
      return "the Architect proposed a plan"
    case "plan.confirmed":
      return "plan confirmed"
    case "plan.revision.requested":
      return "changes to the plan asked for"
    case "graph.accepted":
      return `task graph accepted: ${e.graph.tasks.map((t: { id: string }) => t.id).join(", ")}`
    case "task.dispatched":
      return `${e.taskId}: ${e.role} dispatched (attempt ${e.attempt})`
    case "worker.reported":
      return `${e.taskId}: ${e.result.role} reported`
    case "worker.failed":
      return `${e.taskId}: worker ${e.reason}: ${e.message}`
    case "session.lost":
      return `${e.taskId}: session lost in a restart; started again`
    case "timer.fired":
      return `${e.taskId}: ${e.kind === "inactivity" ? "no activity within the inactivity timeout" : "wall-clock cap reached"}`
    case "gates.passed":
      return `${e.taskId}: gates passed`
    case "gates.errored":
      return `${e.taskId}: the gates could not run (${e.tag}): ${e.message}`
    case "merge.blocked":
      return `${e.taskId}: the merge could not be carried out (${e.tag}): ${e.message}`
    case "session.errored":
      return `${e.taskId}: session errored: ${e.cause}`
    case "finalCheck.done":
      return `final check: ${e.status}${e.message ? ` — ${e.message}` : ""}`
    case "gates.failed":
      return `${e.taskId}: gate ${e.gate} failed`
    case "review.reported":
      return `${e.taskId}: review ${e.report.verdict}`
    case "merge.succeeded":
      return `${e.taskId}: merged (${e.tag})`
    case "merge.conflicted":
      return `${e.taskId}: merge conflict in ${e.files.join(", ")}`
    case "milestone.reviewed":
      return `milestone ${e.phase}: ${e.verdict}`
    case "change.requested":
      return "requirement change: dispatch frozen"
    case "question.answered":
      return `question ${e.questionId} answered`
    case "milestone.reached":
      return `milestone ${e.phase}: the Architect reviews the phase`
    case "delta.accepted":
      return `plan delta accepted: ${e.delta.add.length} added, ${e.delta.remove.length} removed, ${e.delta.modify.length} modified${e.delta.supersedesAdrs.length ? `; supersedes ${e.delta.supersedesAdrs.join(", ")}` : ""}`
    case "consult.answered":
      return `${e.taskId}: the ${e.by === "architect" ? "Architect" : "scheduler agent"} chose ${e.choice}`
    case "consult.unanswered":
      return `${e.taskId}: the ${e.by === "architect" ? "Architect" : "scheduler agent"} gave no decision`
    case "dispatch.failed":
      return `${e.taskId}: the ${e.role} session could not start: ${e.message}`
    case "budget.spent":
      return `${e.taskId ? `${e.taskId}: its` : "the run's"} ${e.kind} budget is spent`
    default:
      return undefined
  }
}
