import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { opencodeProviderConfig, type Scenario } from "../src/index.ts"
import { serverPool } from "./helpers.ts"

// Drives the real OpenCode binary against the scripted model: the only proof that what we stream
// is what @ai-sdk/openai-compatible accepts, and that OpenCode's requests are recognised as scripted.

const OPENCODE = resolve(import.meta.dirname, "../../opencode/node_modules/.bin/opencode")
const pool = serverPool()
afterEach(() => pool.closeAll())

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function isolatedEnv(root: string, configContent: object): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  // The caller's own OpenCode settings must not leak into the run.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("OPENCODE")) env[k] = v
  const home = join(root, "home")
  const dirs = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local/share"), XDG_CACHE_HOME: join(home, ".cache"), XDG_STATE_HOME: join(home, ".local/state") }
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true })
  // The scripted provider is the only model: an empty catalogue spares each start building the bundled one of
  // every online provider (about 40% of a short run's CPU).
  const models = join(root, "models.json")
  writeFileSync(models, "{}")
  return {
    ...env,
    ...dirs,
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_CONFIG_CONTENT: JSON.stringify(configContent),
    OPENCODE_MODELS_PATH: models,
  }
}

function runOpencode(args: string[], prompt: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<Run> {
  return new Promise((done, fail) => {
    // OpenCode takes its directory from PWD when set: the inherited one would point at this repo.
    const child = spawn(OPENCODE, args, { cwd, env: { ...env, PWD: cwd }, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      fail(new Error(`opencode ${args.join(" ")} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, timeoutMs)
    child.on("error", fail)
    child.on("close", (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr })
    })
    child.stdin.end(prompt)
  })
}

function project(root: string): string {
  const dir = join(root, "project")
  mkdirSync(dir)
  spawnSync("git", ["init", "-q", dir])
  return dir
}

const testerConfig = (url: string) => ({
  ...opencodeProviderConfig(url),
  agent: { tester: { mode: "primary", prompt: "AirCoding role: tester\nYou check files and report what they say." } },
})

describe.skipIf(!existsSync(OPENCODE))("with the real opencode binary", () => {
  it("plays a tool call and a final answer through `opencode run`", async () => {
    const root = mkdtempSync(join(tmpdir(), "scripted-e2e-"))
    const dir = project(root)
    writeFileSync(join(dir, "notes.txt"), "the marker is secret-marker-42\n")
    const scenario: Scenario = {
      name: "e2e read",
      scripts: [
        {
          agent: "tester",
          match: "Summarise (?<file>\\S+)",
          steps: [
            { tool: "read", args: { filePath: "{{file}}" }, expect: { offered: ["read", "bash"], systemIncludes: ["AirCoding role: tester"] } },
            { text: "SCRIPTED-SUMMARY: the notes hold the marker.", expect: { lastToolResultIncludes: ["secret-marker-42"] } },
          ],
        },
      ],
    }
    const model = await pool.start(scenario)
    const run = await runOpencode(["run", "--agent", "tester"], `Summarise ${join(dir, "notes.txt")}\n`, dir, isolatedEnv(root, testerConfig(model.url)))

    expect(model.failures()).toEqual([])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout, `stderr: ${run.stderr}\nrequests: ${JSON.stringify(model.requests(), null, 1)}`).toContain("SCRIPTED-SUMMARY: the notes hold the marker.")
    expect(model.requestsByAgent()).toEqual({ title: 1, tester: 2 })
    const tester = model.requests().filter((r) => r.agent === "tester")
    expect(tester.map((r) => [r.step, r.reply.kind, r.stream])).toEqual([
      [0, "tool", true],
      [1, "text", true],
    ])
    expect(tester[0]!.offered).toEqual(expect.arrayContaining(["bash", "read", "write"]))
    expect(tester[1]!.lastToolResult).toContain("secret-marker-42")
  })

  it("makes an unexpected request visible to the opencode user", async () => {
    const root = mkdtempSync(join(tmpdir(), "scripted-e2e-"))
    const dir = project(root)
    const model = await pool.start({ name: "no tester", scripts: [] })
    const run = await runOpencode(["run", "--agent", "tester"], "hello\n", dir, isolatedEnv(root, testerConfig(model.url)))

    expect(model.failures()).toHaveLength(1)
    expect(model.failures()[0]).toContain('no script for agent "tester"')
    // Once: a 400 is not retried.
    expect(model.requestsByAgent()).toEqual({ title: 1, tester: 1 })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('scripted model: unexpected request: agent "tester", no script')
  })
})
