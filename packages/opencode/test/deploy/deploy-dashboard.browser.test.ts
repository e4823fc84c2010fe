import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { DashboardServer } from "../../src/dashboard/server"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { launchChromium } from "../dashboard/helpers"
import { graphOf, steps, task, type EventInput } from "../scheduler/fixtures"
import { TEST_CONFIG } from "../scheduler/simulate"

/**
 * The dashboard's deploy panel in headless Chromium, on the log of a deployable run: one row per target
 * with its deployed commit, hash match, service state, smoke result and whether it was rolled back (the
 * words come from the catalogue the page embeds; their zh-CN twins are checked in deploy-view.test.ts).
 */
const commit = "0123456789abcdef"
const events: EventInput[] = [
  { type: "run.started", runId: "r-deploy", requirement: "Ship it.", config: { ...TEST_CONFIG, deploy: { targets: ["box", "edge"], everyRun: false } } },
  { type: "plan.proposed", summary: "One task, then deploy." },
  { type: "plan.confirmed" },
  { type: "graph.accepted", graph: { ...graphOf(task("T-1")), deployable: true } },
  steps.dispatched("T-1"),
  steps.reported("T-1"),
  steps.gatesPassed("T-1"),
  steps.reviewPass("T-1"),
  steps.merged("T-1"),
  { type: "milestone.reached", phase: 1 },
  { type: "milestone.reviewed", phase: 1, verdict: "pass" },
  { type: "finalCheck.done", status: "passed", message: "ok" },
  { type: "deploy.started", target: "box", n: 1, commit },
  { type: "deploy.started", target: "edge", n: 1, commit },
  { type: "deploy.passed", target: "box", n: 1, commit, message: "ok", evidencePath: ".air/local/evidence/_deploy/box/1", service: "active" },
  {
    type: "deploy.failed",
    target: "edge",
    n: 1,
    commit,
    cause: "hash",
    message: "VERSION differs",
    evidencePath: ".air/local/evidence/_deploy/edge/1",
    rolledBack: true,
    hashMatch: false,
    service: "active (previous release 0-abc)",
    smoke: "not-run",
  },
]

let browser: Awaited<ReturnType<typeof launchChromium>>
let root: string

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "air-deploy-dashboard-"))
  const file = RunData.eventsFile(root)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, events.map((e, i) => JSON.stringify({ seq: i + 1, ...e, at: new Date(Date.UTC(2026, 11, 2, 9, 0, i)).toISOString() })).join("\n") + "\n")
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  if (root) rmSync(root, { recursive: true, force: true })
})

describe("the dashboard's deploy panel", () => {
  test.each([
    ["en", "Deploy", ["box #1", "deployed and verified", "0123456789ab", "match", "active", "passed", "no"], ["edge #1", "failed (hash mismatch)", "0123456789ab", "MISMATCH", "active (previous release 0-abc)", "not run", "yes"]],
  ] as const)("shows every target's commit, hashes, service, smoke and rollback (%s)", async (lang, heading, box, edge) => {
    const running = await DashboardServer.start({ root, lang, port: 0, pollMs: 50 })
    const page = await browser.context.newPage()
    try {
      await page.goto(running.url)
      await page.locator("#deploy tbody tr").first().waitFor()
      expect(await page.locator("#deploy h2").textContent()).toBe(heading)
      const rows = await page.locator("#deploy tbody tr").evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent?.trim())))
      expect(rows).toEqual([box, edge])
      expect(await page.locator('#deploy tr[data-target="edge"]').getAttribute("data-status")).toBe("failed")
    } finally {
      await page.close()
      await running.close()
    }
  }, 60_000)
})
