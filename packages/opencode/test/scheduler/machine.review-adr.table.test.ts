import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { MILESTONE_FIX_ROUNDS } from "../../src/scheduler/core/draft"
import { transition } from "../../src/scheduler/core/machine"
import type { SchedulerState } from "../../src/scheduler/core/state"
import { apply, complete, ev, graphOf, runtimeOf, started, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { checkRow, type TableRow } from "./table"

/**
 * Rows of the machine's table for the Architect's side of the loop: the final milestone review (the last
 * or only phase is reviewed against the whole requirement before the run is done) and edits of an
 * accepted ADR (classified by the Architect; a decision change cascades to the tasks citing it).
 */

function show(command: Command): string {
  if (command.type === "dispatch") return `dispatch:${command.taskId}:${command.role}:${command.attempt}`
  if (command.type === "reviewMilestone") return `reviewMilestone:${command.phase}${command.final ? ":final" : ""}`
  if (command.type === "classifyAdr") return `classifyAdr:${command.adr}:${command.tasks.join(",")}`
  if (command.type === "merge") return `merge:${command.tasks.map((t) => t.taskId).join("+")}`
  if ("taskId" in command) return `${command.type}:${command.taskId}`
  if (command.type === "finish") return `finish:${command.status}`
  // A milestone question's id ends with the event count that asked it: shown without it.
  if (command.type === "ask") return `ask:${command.questionId.replace(/^(milestone:\d+):\d+$/, "$1")}`
  return command.type
}

/** One phase, two tasks: A cites ADR-1, B does not. */
const single = graphOf(task("A", { adrRefs: ["ADR-1"] }), task("B"))
const fix = (id: string) => task(id, { kind: "fix", writeSet: [{ path: "src/fix.cpp", action: "modify", region: id }] })
const failing = (id: string): EventInput => ({ type: "milestone.reviewed", phase: 1, verdict: "fail", fixTasks: [fix(id)], findings: [`gap ${id}`] })
const reached: EventInput = { type: "milestone.reached", phase: 1 }

/** ADR-1 recorded; A merged, B at work. */
const adrGraph = graphOf(
  task("A", { adrRefs: ["ADR-1"], writeSet: [{ path: "src/a.cpp", action: "modify" }] }),
  task("B", { adrRefs: ["ADR-1"], writeSet: [{ path: "src/b.cpp", action: "modify" }] }),
  task("C", { writeSet: [{ path: "src/a.cpp", action: "modify" }], deps: ["A"] }),
  task("D", { adrRefs: ["ADR-1"], deps: ["C"], writeSet: [{ path: "src/d.cpp", action: "modify" }] }),
)

const s = {
  /** Both tasks of the only phase at work. */
  running: () => apply(started(single).state, steps.dispatched("A"), steps.dispatched("B")).state,
  /** A merged; B's merge is the last. */
  lastMerge: () => apply(complete(s.running(), "A").state, steps.reported("B"), steps.gatesPassed("B"), steps.reviewPass("B")).state,
  /** Everything merged: the final review is due and started. */
  finalReviewing: () => apply(s.lastMerge(), steps.merged("B"), reached).state,
  /** The first final review failed; its fix F-1 is at work. */
  fixing: () => apply(s.finalReviewing(), failing("F-1")).state,
  /** F-1 merged: the second final review is due. */
  secondReview: () => complete(s.fixing(), "F-1").state,
  /** The final review failed MILESTONE_FIX_ROUNDS times, each fix merged: the next failure asks the user. */
  roundsSpent: () => {
    let state = s.finalReviewing()
    for (let n = 1; n <= MILESTONE_FIX_ROUNDS; n++) state = apply(complete(apply(state, failing(`F-${n}`)).state, `F-${n}`).state, reached).state
    return state
  },
  askedUser: () => apply(s.roundsSpent(), failing("F-9")).state,
  /** ADR-1 recorded; A merged, B at work, C dispatched after A. */
  adrRunning: () => {
    const state = apply(started(adrGraph).state, { type: "adr.recorded", adr: "ADR-1", hash: "h1" }, steps.dispatched("A"), steps.dispatched("B")).state
    return apply(complete(state, "A").state, steps.dispatched("C")).state
  },
  adrEdited: () => apply(s.adrRunning(), { type: "adr.edited", adr: "ADR-1", hash: "h2" }).state,
}

const rows: TableRow[] = [
  {
    rule: "the only phase merged: the Architect's final review comes before the run is done",
    given: s.lastMerge,
    event: steps.merged("B"),
    statuses: { B: "merged" },
    commands: ["notify", "reviewMilestone:1:final", "notify"],
    check: (st) => expect([st.stage, st.milestone?.final, st.finished]).toEqual(["milestone", true, null]),
  },
  {
    rule: "a passing final review finishes the run done",
    given: s.finalReviewing,
    event: { type: "milestone.reviewed", phase: 1, verdict: "pass" },
    commands: ["notify", "finish:done", "notify"],
    check: (st) => expect([st.finished, st.finalReviewPassed, st.milestone]).toEqual([{ status: "done" }, true, null]),
  },
  {
    rule: "a failing final review adds its fix task to the last phase, which runs",
    given: s.finalReviewing,
    event: failing("F-1"),
    statuses: { "F-1": "running" },
    commands: ["notify", "notify", "dispatch:F-1:executor:1"],
    check: (st) => expect([st.stage, st.finished, st.milestoneFails]).toEqual(["running", null, 1]),
  },
  {
    rule: "the fix task merged: a second final review is due",
    given: () => apply(s.fixing(), steps.dispatched("F-1"), steps.reported("F-1"), steps.gatesPassed("F-1"), steps.reviewPass("F-1")).state,
    event: steps.merged("F-1"),
    statuses: { "F-1": "merged" },
    commands: ["notify", "reviewMilestone:1:final", "notify"],
  },
  {
    rule: "the second final review passes: done",
    given: () => apply(s.secondReview(), reached).state,
    event: { type: "milestone.reviewed", phase: 1, verdict: "pass" },
    commands: ["notify", "finish:done", "notify"],
    check: (st) => expect([st.finished, st.milestoneFails]).toEqual([{ status: "done" }, 0]),
  },
  {
    rule: `a review failing after ${MILESTONE_FIX_ROUNDS} rounds of fixes asks the user instead; the run stops blocked`,
    given: s.roundsSpent,
    event: failing("F-9"),
    commands: ["ask:milestone:1", "notify", "finish:blocked", "notify"],
    check: (st) => {
      expect(st.graph!.tasks.map((t) => t.id)).not.toContain("F-9")
      expect(st.questions[0]).toMatchObject({ taskId: null, milestone: 1, text: expect.stringContaining(`failed ${MILESTONE_FIX_ROUNDS + 1} times`) })
      expect(st.questions[0]!.text).toContain("gap F-9")
    },
  },
  {
    rule: "the user's answer reopens the run: the review comes again, with the answer and fresh rounds",
    given: s.askedUser,
    event: { type: "question.answered", questionId: `milestone:1:${s.askedUser().eventCount}`, answer: "accept it as it is" },
    commands: ["reviewMilestone:1:final", "notify"],
    check: (st) => expect([st.stage, st.milestoneFails, st.milestoneAnswer, st.runBudgetSpent]).toEqual(["milestone", 0, "accept it as it is", false]),
  },
  {
    rule: "a run started before the final review existed finishes when its last task lands",
    given: () => {
      const state = apply(started(single).state, steps.dispatched("A"), steps.dispatched("B")).state
      const old = { ...state, config: { ...state.config!, finalReview: undefined } }
      return apply(complete(old, "A").state, steps.reported("B"), steps.gatesPassed("B"), steps.reviewPass("B")).state
    },
    event: steps.merged("B"),
    commands: ["notify", "finish:done", "notify"],
  },
  {
    rule: "an accepted ADR's hash is recorded",
    given: () => started(adrGraph).state,
    event: { type: "adr.recorded", adr: "ADR-1", hash: "h1" },
    commands: [],
    check: (st) => expect(st.adrs).toEqual({ "ADR-1": "h1" }),
  },
  {
    rule: "an edited ADR goes to the Architect; tasks citing it do not start meanwhile",
    given: s.adrRunning,
    event: { type: "adr.edited", adr: "ADR-1", hash: "h2" },
    commands: ["classifyAdr:ADR-1:A,B,D", "notify"],
    check: (st) => expect(st.adrEdits.map((e) => [e.adr, e.hash])).toEqual([["ADR-1", "h2"]]),
  },
  {
    rule: "while the edit waits, a task citing the ADR is held back though ready, and the run does not stop",
    given: () => apply(complete(s.adrEdited(), "B").state, steps.reported("C"), steps.gatesPassed("C"), steps.reviewPass("C")).state,
    event: steps.merged("C"),
    statuses: { C: "merged", D: "pending" },
    commands: ["notify"],
    check: (st) => expect([st.stage, st.finished, st.ready]).toEqual(["running", null, ["D"]]),
  },
  {
    rule: "a clarification only records the new hash; held tasks start",
    given: () => apply(complete(complete(s.adrEdited(), "B").state, "C").state).state,
    event: { type: "adr.classified", adr: "ADR-1", hash: "h2", kind: "clarification", note: "wording" },
    statuses: { A: "merged", B: "merged", D: "running" },
    commands: ["notify", "dispatch:D:executor:1"],
    check: (st) => expect([st.adrs, st.adrEdits, st.graph!.tasks.length]).toEqual([{ "ADR-1": "h2" }, [], 4]),
  },
  {
    rule: "a decision change: merged citing tasks re-verified, citing work in flight redone, pending citing tasks left alone",
    given: s.adrEdited,
    event: { type: "adr.classified", adr: "ADR-1", hash: "h2", kind: "decision-change", note: "ints become longs" },
    statuses: { A: "merged", B: "running", C: "running", D: "pending", "A.rv": "running" },
    commands: ["abort:B", "notify", "notify", "dispatch:A.rv:executor:1", "dispatch:B:executor:2"],
    check: (st, commands) => {
      const rv = st.graph!.tasks.find((t) => t.id === "A.rv")!
      expect([rv.kind, rv.adrRefs, rv.files]).toEqual(["verify", ["ADR-1"], ["src/a.cpp"]])
      expect(commands.map((c) => (c.type === "notify" ? c.text : "")).join("\n")).toMatch(/ADR-1 changed its decision.*redone B; re-verified by A\.rv; boundary: C/)
      expect(runtimeOf(st, "B").repairs).toBe(0)
      expect(st.adrs["ADR-1"]).toBe("h2")
    },
  },
]

describe("final review and ADR edits: every rule", () => {
  for (const row of rows) {
    it(row.rule, () => checkRow(row, show))
  }
})

const refusals: { rule: string; given: () => SchedulerState; event: EventInput; reason: RegExp }[] = [
  { rule: "an edit of an ADR never recorded", given: () => started(adrGraph).state, event: { type: "adr.edited", adr: "ADR-1", hash: "h2" }, reason: /never recorded/ },
  { rule: "an edit that changes nothing", given: s.adrRunning, event: { type: "adr.edited", adr: "ADR-1", hash: "h1" }, reason: /unchanged/ },
  { rule: "a second edit before the first is classified", given: s.adrEdited, event: { type: "adr.edited", adr: "ADR-1", hash: "h3" }, reason: /already waiting/ },
  { rule: "an ADR recorded twice", given: s.adrRunning, event: { type: "adr.recorded", adr: "ADR-1", hash: "h9" }, reason: /already recorded/ },
  { rule: "a classification nobody asked for", given: s.adrRunning, event: { type: "adr.classified", adr: "ADR-1", hash: "h2", kind: "clarification", note: "" }, reason: /no edit of ADR-1/ },
  { rule: "a classification of another version of the file", given: s.adrEdited, event: { type: "adr.classified", adr: "ADR-1", hash: "h7", kind: "clarification", note: "" }, reason: /h2, not h7/ },
]

describe("final review and ADR edits: refusals change nothing", () => {
  for (const row of refusals) {
    it(row.rule, () => {
      const given = deepFreeze(row.given())
      const result = transition(given, ev(row.event))
      expect("refused" in result && result.refused).toMatch(row.reason)
    })
  }
})
