import { describe, expect, test } from "vitest"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { apply, complete, graphOf, passFinalReview, started, task } from "../scheduler/fixtures"

/**
 * air_listen tells the end of a run only once the final check is recorded. A run is "finished" as soon as
 * its last task merges; the check of the integration branch runs after, and the interpreter pushes RUN ENDED
 * when it is in. An air_listen in between used to answer with the end at once, without the check's verdict:
 * Main told the user "done" while a failing check was still to come.
 */
const ROOT = "/nonexistent/project"

describe("RunReport.endNews: the end is told once, with its final check", () => {
  const finished = passFinalReview(complete(started(graphOf(task("T-1"))).state, "T-1").state).state

  test("finished, final check outstanding: no RUN ENDED, a line that says the check is running", () => {
    expect(finished.finished).toEqual({ status: "done" })
    expect(finished.finalCheck).toBeNull()
    const news = RunReport.endNews(ROOT, finished, [])
    expect(news.some((n) => n.startsWith("RUN ENDED"))).toBe(false)
    expect(news.join("\n")).toMatch(/final check of the integration branch is running/)
  })

  test("final check recorded (failed): RUN ENDED, the end text, at once", () => {
    const checked = apply(finished, { type: "finalCheck.done", status: "failed", message: "integration branch FAILS: ctest exited 8" }).state
    const news = RunReport.endNews(ROOT, checked, [])
    expect(news).toHaveLength(1)
    expect(news[0]).toMatch(/^RUN ENDED/)
    expect(news[0]).toBe(RunReport.endText(ROOT, checked))
  })

  test("the inbox already carries RUN ENDED: nothing is added, the end is told once", () => {
    const checked = apply(finished, { type: "finalCheck.done", status: "passed", message: "ok" }).state
    const fromInbox = RunReport.endText(ROOT, checked)
    expect(RunReport.endNews(ROOT, checked, [fromInbox])).toEqual([])
    expect(RunReport.endNews(ROOT, finished, [fromInbox])).toEqual([])
  })

  test("a run still at work has no end news", () => {
    const running = started(graphOf(task("T-1"), task("T-2"))).state
    expect(RunReport.endNews(ROOT, running, [])).toEqual([])
    expect(RunReport.endNews(ROOT, complete(running, "T-1").state, [])).toEqual([])
  })
})
