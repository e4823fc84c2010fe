import { readFileSync, readlinkSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, submittingMain, trivialProject, writeAndReport, type RunResult } from "../support/runs"
import { pidfileService, startSshd, type Sshd } from "../support/sshd"

/**
 * A deployable run end to end: the real engine, the scripted model, git, and a real sshd on 127.0.0.1 as the
 * target. The Architect marks the plan deployable; after the merge and the final check the Scheduler deploys
 * the project to the target, and the run is done only once the target runs the merged build.
 */
const asRoot = process.getuid?.() === 0
const requirement = "Ship version v2 to the box."

let sandbox: Sandbox
let sshd: Sshd
let service: ReturnType<typeof pidfileService>
let project: string
let r: RunResult

beforeAll(async () => {
  if (!asRoot) return
  sandbox = makeSandbox("air-deploy-e2e-")
  sshd = await startSshd()
  service = pidfileService(sshd.targetDir)
  const deploy = {
    schemaVersion: 1,
    targets: [
      {
        name: "box",
        host: "127.0.0.1",
        port: sshd.port,
        user: sshd.user,
        identityFile: sshd.identity,
        knownHostsFile: sshd.knownHosts,
        artefacts: { paths: ["bin/app", "VERSION"] },
        remoteDir: join(sshd.targetDir, "app"),
        restart: { ...service.restart, start: service.restart.start.replace("./bin/app", "sh ./bin/app") },
        smoke: service.smoke,
        stepTimeoutMs: 30_000,
      },
    ],
  }
  project = trivialProject(sandbox, { "bin/app": service.app, VERSION: "v1\n", ".air/shared/rules/deploy.json": JSON.stringify(deploy, null, 2) })
  const scenario = {
    name: "deploy",
    scripts: [
      submittingMain(requirement),
      {
        agent: "architect",
        match: "^Requirement:",
        steps: [
          { tool: "air_propose", args: { summary: "Bump VERSION to v2; the run deploys it." } },
          { tool: "air_plan", args: { deployable: true, tasks: [{ id: "T-1", title: "Bump the version", kind: "docs", writeSet: [{ path: "VERSION", action: "modify" }], doneWhen: "VERSION says v2" }] } },
          { text: "Planned." },
        ],
      },
      { agent: "executor", match: "^Task T-1:", steps: writeAndReport("VERSION", "v2\n", "Bump VERSION to v2") },
      passingReviewer,
    ],
  }
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 600_000)

afterAll(async () => {
  service?.kill()
  await sshd?.stop()
  sandbox?.cleanup()
})

describe.skipIf(!asRoot)("a deployable run", () => {
  test("ends done only after the target passed its deploy, for the merged commit", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    const seq = (type: string) => r.events.find((e) => e.type === type)?.seq ?? -1
    expect(seq("finalCheck.done")).toBeGreaterThan(seq("merge.succeeded"))
    expect(seq("deploy.started")).toBeGreaterThan(seq("finalCheck.done"))
    expect(seq("deploy.passed")).toBeGreaterThan(seq("deploy.started"))
    const started = r.events.find((e) => e.type === "deploy.started")
    const merged = r.events.find((e) => e.type === "merge.succeeded")
    expect(started.commit.startsWith(merged.commit) || merged.commit.startsWith(started.commit)).toBe(true)
  })

  test("the target runs the merged build, and the summary says so per target", () => {
    expect(readFileSync(service.running, "utf8").trim()).toBe("v2")
    expect(readlinkSync(join(sshd.targetDir, "app", "current"))).toMatch(/^releases\/1-/)
    expect(r.summary.deploy).toEqual([expect.objectContaining({ target: "box", status: "passed", hashMatch: true, smoke: "passed", rolledBack: false })])
    expect(readFileSync(join(project, ".air/local/evidence/_deploy/box/1/smoke.txt"), "utf8")).toContain("exit 0")
  })
})
