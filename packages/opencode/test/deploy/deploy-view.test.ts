import { describe, expect, it } from "vitest"
import { RunView } from "../../src/read/view"
import { ViewRender } from "../../src/read/view-render"
import { waitingFor } from "../../src/text/run-status"
import { TuiView } from "../../src/tui/view"
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
    const en = ViewRender.render(state, "en")
    expect(en).toContain("box #1: deployed and verified · commit 0123456789ab · hashes match · service active · smoke passed")
    expect(en).toContain("edge #1: failed (hash mismatch) · commit 0123456789ab · hashes MISMATCH · service active (previous release 0-abc) · smoke not run · rolled back to the previous release")
    const zh = ViewRender.render(state, "zh-CN")
    expect(zh).toContain("box #1：已部署并验证 · 提交 0123456789ab · 哈希 一致 · 服务 运行中 · 冒烟测试 通过")
    expect(zh).toContain("edge #1：失败（哈希不一致）")
    expect(zh).not.toMatch(/not-run|passed|\(hash\)/)
  })

  it("status --json, the TUI sidebar and the dashboard's data carry each target: commit, hashes, service, smoke, rollback", () => {
    const state = apply(deployed(), {
      type: "deploy.failed",
      target: "edge",
      n: 1,
      commit: "0123456789abcdef",
      cause: "smoke",
      message: "exit 1",
      evidencePath: ".air/local/evidence/_deploy/edge/1",
      rolledBack: true,
      hashMatch: true,
      service: "active (previous release 0-abc)",
      smoke: "failed",
    }).state
    const view = RunView.build({ state })
    expect(JSON.parse(JSON.stringify(view)).deploy).toEqual([
      expect.objectContaining({ target: "box", phase: null, status: "passed", commit: "0123456789abcdef", hashMatch: true, service: "active", smoke: "passed", rolledBack: false }),
      expect.objectContaining({ target: "edge", status: "failed", cause: "smoke", hashMatch: true, smoke: "failed", rolledBack: true, evidencePath: ".air/local/evidence/_deploy/edge/1" }),
    ])
    const side = TuiView.sidebar(view, "en")
    expect(side.deployHeading).toBe("Deploy")
    expect(side.deploy.map((l) => `${l.tone} ${l.text}`)).toEqual([
      "success box #1 deployed and verified",
      "muted   0123456789ab · hashes match",
      "muted   smoke passed",
      "muted   service active",
      "error edge #1 failed (smoke test failed)",
      "muted   0123456789ab · hashes match",
      "error   smoke FAILED · rolled back",
      "muted   service active (previous release …",
    ])
    expect(side.deploy.every((l) => l.text.length <= 36)).toBe(true)
    expect(TuiView.sidebar(view, "zh-CN").deploy[0]!.text).toBe("box #1 已部署并验证")
  })

  it("the TUI toasts each deploy's outcome once", () => {
    const before = deployed()
    const after = apply(before, {
      type: "deploy.failed",
      target: "edge",
      n: 1,
      commit: "0123456789abcdef",
      cause: "smoke",
      message: "exit 1",
      evidencePath: ".air/local/evidence/_deploy/edge/1",
      rolledBack: true,
      hashMatch: true,
      service: "active",
      smoke: "failed",
    }).state
    const passed = apply(before, { type: "deploy.passed", target: "edge", n: 1, commit: "0123456789abcdef", message: "ok", evidencePath: "e", service: "active" }).state
    expect(TuiView.toasts(before, after, "en").filter((x) => x.message.includes("deploy"))).toEqual([
      { message: "The deploy to edge failed: smoke test failed · rolled back", variant: "error" },
    ])
    expect(TuiView.toasts(before, passed, "zh-CN").map((x) => x.message)).toContain("已部署到 edge：0123456789ab，哈希一致，冒烟测试通过")
    expect(TuiView.toasts(before, passed, "en").map((x) => x.message)).toContain("Deployed to edge: 0123456789ab, hashes match, smoke passed")
    // A later state of the same outcome says nothing again.
    expect(TuiView.toasts(after, { ...after, eventCount: after.eventCount + 1 }, "en")).toEqual([])
  })

    it("the deploy of a deployable phase says which phase it carries", () => {
    const graph = { ...graphOf(task("T-1"), task("T-2", { phase: 2, deps: ["T-1"] })), deployPhases: [1] }
    let { state } = started(graph, { finalReview: true, deploy: { targets: ["box"], everyRun: false } })
    state = apply(complete(state, "T-1").state, { type: "milestone.reached", phase: 1 }, { type: "milestone.reviewed", phase: 1, verdict: "pass" }).state
    expect(ViewRender.render(state, "en")).toContain("Deploy of phase 1\n  box #1: deploying")
    expect(ViewRender.render(state, "zh-CN")).toContain("第 1 阶段的部署")
    expect(TuiView.sidebar(RunView.build({ state }), "en").deployHeading).toBe("Deploy of phase 1")
  })
})
