import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { checklistFindings, missingUiRows, reviewPasses, uiSkillRef } from "./report.schema"
import type { TaskRuntime } from "./state"
import { ownSession } from "./money-rules"
import { findTask } from "./rule-guards"

/** The machine's rules for a task's review: the reviewer's session starts, and its report passes the task to the merge queue, sends it back for repair, or blocks its release. */

export function reviewStarted(d: Draft, e: EventOf<"review.started">): string | undefined {
  const t = findTask(d, e.taskId, ["reviewing"])
  if (typeof t === "string") return t
  if (t.reviewSessionId !== null) return `task ${t.id} is already reviewed in session ${t.reviewSessionId}`
  d.patch(t.id, { reviewSessionId: e.sessionId })
  ownSession(d, e.sessionId, t.id)
}

export function reviewReported(d: Draft, e: EventOf<"review.reported">): string | undefined {
  const t = findTask(d, e.taskId, ["reviewing"])
  if (typeof t === "string") return t
  if (e.report.taskId !== t.id) return `the review report is for task ${e.report.taskId}, not ${t.id}`
  // A ui task is judged against every section of the UI design skill: a review that skips one is no review of it.
  const uiMissing = e.uiSkillSections && d.node(t.id).kind === "ui" ? missingUiRows(e.report, e.uiSkillSections) : []
  if (uiMissing.length > 0)
    return `task ${t.id} is a ui task: its review needs one row per section of the UI design skill, and has none for ${uiMissing.map((s) => `"${uiSkillRef(s)}"`).join(", ")}; add them (status match, with a note, when the change cannot touch a section) and call air_review again`
  d.patch(t.id, { reviewSessionId: null, overflow: null })
  const disagreeing = e.report.rows.filter((row) => row.status !== "match")
  const risks = checklistFindings(e.report)
  const findings = [...e.report.findings, ...disagreeing.map((row) => `${row.status}: ${row.designRef} ↔ ${row.code}${row.note ? ` — ${row.note}` : ""}`), ...risks.map((risk) => `checklist ${risk}`)]
  if (e.report.verdict === "block-release") {
    blockRelease(d, t, findings)
  } else if (risks.length > 0) {
    // A C++ risk found at a file and line fails the review whatever the verdict says: the executor repairs it.
    d.patch(t.id, { findings })
    d.repairOrConsult(t.id, "executor", `review failed on the C++ checklist: ${findings.join("; ")}`, { source: "review", message: findings.join("\n"), evidencePath: null }, ["executor-again", "block"])
  } else if (reviewPasses(e.report)) {
    d.patch(t.id, { findings: [] })
    d.enqueueMerge(t.id)
  } else if (e.report.verdict === "pass") {
    // The verdict says pass while rows say otherwise: no rule decides which to believe.
    d.patch(t.id, { findings })
    d.consult(t.id, `task ${t.id}: the reviewer's verdict is pass but ${disagreeing.length} row(s) are divergent or missing`, ["review-again", "executor-again", "block"])
  } else {
    d.patch(t.id, { findings })
    d.repairOrConsult(t.id, "executor", `review failed: ${findings.join("; ") || "no findings given"}`, { source: "review", message: findings.join("\n"), evidencePath: null }, ["executor-again", "block"])
  }
  d.schedule()
}

/** The reviewer says the change must not land as it is: the merge stops and the Architect decides. */
function blockRelease(d: Draft, t: TaskRuntime, findings: string[]): void {
  const why = findings.join("; ") || "no findings given"
  d.patch(t.id, { findings, lastFailure: { source: "review", message: `block-release: ${why}`, evidencePath: null } })
  d.consult(t.id, `task ${t.id}: the reviewer blocks its release: ${why}`, ["executor-again", "review-again", "block"], "architect")
  d.notify(`the reviewer blocks the release of task ${t.id}; the Architect is consulted`)
}
