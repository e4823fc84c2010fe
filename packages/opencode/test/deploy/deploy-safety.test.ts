import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { WriteSetGate } from "../../src/scheduler/runtime/gates/write-set"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { DeployRules } from "../../src/scheduler/runtime/deploy/rules"
import { DeployRestart } from "../../src/scheduler/runtime/deploy/restart"
import { DeploySsh } from "../../src/scheduler/runtime/deploy/ssh"

/** No worker or gate can change the targets or read the identity file; host keys are checked unless a target says otherwise. */
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const base = {
  name: "box",
  host: "box.example",
  user: "deploy",
  artefacts: { paths: ["build/server"] },
  remoteDir: "/opt/server",
  restart: { preset: "systemd", unit: "server.service" },
  smoke: "curl -fsS localhost:8080/health",
}

describe("deploy safety", () => {
  it("a change to the deploy rules fails the write-set gate unless the write-set names the file itself", () => {
    const rules = WriteSetGate.DEPLOY_RULES
    expect(WriteSetGate.violations([rules], [], [{ path: ".air/", action: "modify" }])).toEqual([{ path: rules, why: "deploy-rules" }])
    expect(WriteSetGate.violations([rules], [], [{ path: "*", action: "modify" }])).toEqual([{ path: rules, why: "deploy-rules" }])
    expect(WriteSetGate.violations([rules], [], [{ path: rules, action: "modify" }])).toEqual([])
    expect(WriteSetGate.deployRulesViolations([rules], undefined)).toHaveLength(1)
    expect(WriteSetGate.message("task T-1", [{ path: rules, why: "deploy-rules" }])).toContain("names this file itself")
  })

  it("the sandbox hides every target's identity file from workers and gates", () => {
    const project = mkdtempSync(join(tmpdir(), "air-deploy-safety-"))
    dirs.push(project)
    const key = join(project, "keys", "deploy_key")
    mkdirSync(join(project, "keys"))
    writeFileSync(key, "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    mkdirSync(join(project, ".air", "shared", "rules"), { recursive: true })
    writeFileSync(join(project, DeployRules.RULES_PATH), JSON.stringify({ schemaVersion: 1, targets: [{ ...base, identityFile: "keys/deploy_key" }] }))
    const policy = Sandbox.plan({ worktree: project, project, env: { HOME: join(project, "home"), PATH: process.env.PATH } })
    expect(policy.hidden).toContainEqual({ path: key, kind: "file" })
    // The deploy's ssh control sockets are an authenticated way onto the targets: hidden as well.
    mkdirSync(join(project, DeployRules.SSH_DIR), { recursive: true })
    const again = Sandbox.plan({ worktree: project, project, env: { HOME: join(project, "home"), PATH: process.env.PATH } })
    expect(again.hidden).toContainEqual({ path: join(project, DeployRules.SSH_DIR), kind: "dir" })
    expect(DeploySsh.open(project, DeployRules.Target.parse(base)).controlPath.startsWith(join(project, DeployRules.SSH_DIR))).toBe(true)
  })

  it("host keys are checked strictly unless the target turns it off in writing", () => {
    const strict = DeployRules.Target.parse(base)
    const session = (t: DeployRules.Target) => DeploySsh.options(DeploySsh.open("/p", t))
    expect(session(strict)).toContain("StrictHostKeyChecking=yes")
    expect(session(DeployRules.Target.parse({ ...base, knownHosts: "accept-new" }))).toContain("StrictHostKeyChecking=accept-new")
    expect(session(DeployRules.Target.parse({ ...base, knownHosts: "off" }))).toContain("StrictHostKeyChecking=no")
    expect(session(strict)).toContain("BatchMode=yes")
  })

  it("the rules are strict: an unknown key, a relative remote dir or a path out of the project is refused with the place named", () => {
    const parse = (target: object) => () => DeployRules.parse(JSON.stringify({ schemaVersion: 1, targets: [target] }))
    expect(parse({ ...base, hostname: "x" })).toThrow(/hostname/)
    expect(parse({ ...base, remoteDir: "opt/server" })).toThrow(/remoteDir/)
    expect(parse({ ...base, artefacts: { paths: ["../secrets"] } })).toThrow(/artefacts/)
    expect(parse({ ...base, restart: { preset: "systemd", unit: "x; rm -rf /" } })).toThrow(/unit/)
    expect(() => DeployRules.parse(JSON.stringify({ schemaVersion: 1, targets: [base, base] }))).toThrow(/used twice/)
    expect(DeployRules.parse(JSON.stringify({ schemaVersion: 1 })).targets).toEqual([])
  })

  it("the systemd preset generates daemon-reload, restart, is-active and a 50-line journal excerpt", () => {
    expect(DeployRestart.commands({ preset: "systemd", unit: "server.service", sudo: false })).toEqual({
      reload: "systemctl daemon-reload",
      restart: "systemctl restart server.service",
      status: "systemctl is-active server.service",
      journal: "journalctl -u server.service -n 50 --no-pager",
    })
    expect(DeployRestart.commands({ preset: "systemd", unit: "server.service", sudo: true }).restart).toBe("sudo -n systemctl restart server.service")
    expect(DeployRestart.programs({ preset: "systemd", unit: "server.service", sudo: false })).toEqual(["systemctl", "journalctl"])
  })
})
