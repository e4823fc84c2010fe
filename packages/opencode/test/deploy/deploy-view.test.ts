import { describe, expect, it } from "vitest"
import { RunView } from "../../src/read/view"
import { waitingFor } from "../../src/read/run-status"
import { apply, complete, graphOf, passFinalReview, started, task } from "../scheduler/fixtures"

/** status, the summary, the TUI and the dashboard show each target: deployed commit, hash match, service, smoke, rolled back. */
function deployed() {
  let { state } = started({ ...graphOf(task("T-1")), deployable: true }, { finalReview: true, deploy: { targets: ["box", "edge"], everyRun: false } })
  state = complete(state, "T-1").state
  state = passFinalReview(state).state
  return apply(
    state,
    { type: "finalCheck.done", status: "passed", message: "" },
    { type: "deploy.started", target: "box", n: 1, commit: "0123456789abcdef" },
    { type: "deploy.passed", target: "box", n: 1, commit: "0123456789abcdef", message: "ok", evidencePath: ".air/local/evidence/_deploy/box/1", service: "active" },
    { type: "deploy.started", target: "edge", n: 1, commit: "0123456789abcdef" },
  ).state
}

describe("deploy in the views", () => {
  it("a deploy in flight is what the run waits for", () => {
    expect(waitingFor(deployed())).toContainEqual({ kind: "deploy", targets: ["edge"] })
  })

  it("status shows one line per target, in English and Chinese", () => {
    let state = deployed()
    state = apply(state, {
      type: "deploy.failed",
      target: "edge",
      n: 1,
      commit: "0123456789abcdef",
      cause: "hash",
      message: "differs",
      evidencePath: ".air/local/evidence/_deploy/edge/1",
      rolledBack: true,
      hashMatch: false,
      service: "active (previous release 0-abc)",
      smoke: "not-run",
    }).state
    const en = RunView.render(state, "en")
    expect(en).toContain("box #1: deployed and verified · commit 0123456789ab · hashes match · service active · smoke passed")
    expect(en).toContain("edge #1: failed (hash) · commit 0123456789ab · hashes MISMATCH · service active (previous release 0-abc) · smoke not-run · rolled back to the previous release")
    expect(RunView.render(state, "zh-CN")).toContain("box #1：已部署并验证")
  })
})
