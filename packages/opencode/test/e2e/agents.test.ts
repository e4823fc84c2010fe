import { Sandbox as OsSandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { spawn, type ChildProcess } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { createOpencodeClient } from "@opencode-ai/sdk"
import type { ScriptedModel } from "@aircoding/scripted-model"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Permission, Roles } from "../../src/agent"
import { Paths } from "../../src/engine"
import { engineEnv, scriptedModel } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * AirCoding's agents against the real engine (opencode-ai 1.18.33) and the scripted model: for every role,
 * the tools the engine offers the model are exactly its row of the whitelist, every forbidden call —
 * other tools, `task`, another role's coordinator tools, paths out of a worker's directory, `.air/local` —
 * is refused and changes nothing on disk, the debugger edits only after evidence, and the guard's
 * refusals are recorded in `<project>/.air/local/state/guard.jsonl`.
 *
 * How the sessions are started: `opencode run --agent <subagent>` falls back to the default agent (main)
 * — only primary agents can be chosen there — so every role's session is created through one shared
 * `opencode serve`, the way the Scheduler's code (and any SDK client) starts them: `session.create` in the
 * role's project directory, then `session.prompt` with `agent: <role>`. Such a session has no worktree:
 * the guard confines executor and debugger to the session's directory (the project).
 *
 * Every project also carries a hostile `opencode.json` that tries to widen each role (top-level
 * `"*": "allow"`, per-agent allows and `tools`): the offered lists must not move.
 *
 * A tool that is not offered comes back from the engine as its `invalid` tool ("Model tried to call
 * unavailable tool …"; the guard's hook only sees a call of `invalid`, which it lets through, so such
 * attempts are not in guard.jsonl); an offered tool used out of bounds (a path, `.air/local`, the
 * debugger's evidence rule) comes back with the guard's "AirCoding guard: …" text.
 */

/**
 * What the pinned engine has for this model: its built-ins and AirCoding's tools. `lsp` is experimental
 * and not offered, there is no `list`, and `apply_patch` is offered only to GPT-style models (instead of
 * `edit`/`write`): the scripted model gets `edit` and `write`.
 */
const ENGINE_TOOLS = [...Roles.ENGINE_BUILTIN.filter((t) => t !== "lsp" && t !== "apply_patch"), ...Roles.AIR_TOOLS]
const offeredTo = (role: Roles.Name) => Permission.expectedOffer(role, ENGINE_TOOLS)

const PROMPT = "AirCoding e2e agents check"
const USER_RULES = "The user's own rules were loaded from opencode.json."

type Outcome = "unavailable" | "guard" | "ok"
type Call = {
  tool: string
  args: Record<string, unknown>
  outcome: Outcome
  /** Texts the result must contain (besides the outcome's own marker). */
  includes?: string[]
  /** For guard refusals: the reason recorded in guard.jsonl. */
  reason?: "tool" | "path" | "air-local" | "evidence"
}
/** One model turn: calls made in parallel in one assistant message. */
type Turn = Call[]

type RoleRun = {
  role: Roles.Name
  project: string
  outside: string
  sessionID: string
  agent: string | undefined
  error: unknown
  turns: Turn[]
  /** The tool parts of each assistant message that called tools, in order (one per turn). */
  seen: ToolPart[][]
  parts: ToolPart[]
  before: Snapshot
  after: Snapshot
  outsideBefore: Snapshot
  outsideAfter: Snapshot
  ms: number
}
type ToolPart = { tool: string; status: string; input: Record<string, any>; output: string }
type Snapshot = Map<string, string>

let sandbox: Sandbox
let model: ScriptedModel
let serve: { url: string; child: ChildProcess; stderr: () => string } | undefined
const plans = new Map<Roles.Name, Turn[]>()

function marker(call: Call): string {
  return call.outcome === "unavailable" ? `unavailable tool '${call.tool}'` : call.outcome === "guard" ? "AirCoding guard" : ""
}

/** The texts the model must find in the results of a turn: each call's marker and its own texts. */
function resultTexts(turn: Turn): string[] {
  return [...new Set(turn.flatMap((c) => [marker(c), ...(c.includes ?? [])].filter(Boolean)))]
}

// ---- the calls each role's model makes ----

const patch = "*** Begin Patch\n*** Add File: pwned-patch.txt\n+pwned\n*** End Patch"

/** A read-only role (main, architect, reviewer) tries to change things and to start an agent. */
function readOnlyTurns(role: Roles.Name, foreign: string, foreignArgs: Record<string, unknown>): Turn[] {
  const attempts: Turn = [
    { tool: "bash", args: { command: "touch pwned-bash.txt", description: "touch" }, outcome: "unavailable" },
    { tool: "edit", args: { filePath: "a.txt", oldString: "original", newString: "pwned" }, outcome: "unavailable" },
    { tool: "write", args: { filePath: "pwned-write.txt", content: "pwned\n" }, outcome: "unavailable" },
    { tool: "apply_patch", args: { patchText: patch }, outcome: "unavailable" },
    { tool: "task", args: { description: "do it", prompt: `PWNED task started by ${role}`, subagent_type: "executor" }, outcome: "unavailable" },
    { tool: foreign, args: foreignArgs, outcome: "unavailable" },
  ]
  // A control: what the row allows still works (so the refusals above are not a broken session).
  return [attempts, [{ tool: "read", args: { filePath: "a.txt" }, outcome: "ok", includes: ["original"] }]]
}

/** What a worker (executor, debugger) tries outside its directory, whatever the evidence. */
function workerBreakouts(role: Roles.Name, outside: string): Turn {
  const out = `outside-${role}`
  return [
    { tool: "task", args: { description: "do it", prompt: `PWNED task started by ${role}`, subagent_type: "executor" }, outcome: "unavailable" },
    { tool: "air_submit", args: { requirement: "PWNED" }, outcome: "unavailable" },
    { tool: "write", args: { filePath: join(outside, "keep.txt"), content: "pwned\n" }, outcome: "guard", reason: "path", includes: ["is outside the worktree"] },
    { tool: "write", args: { filePath: `../${out}/pwned.txt`, content: "pwned\n" }, outcome: "guard", reason: "path", includes: ["climbs out of the worktree with `..`"] },
    { tool: "edit", args: { filePath: join(outside, "keep.txt"), oldString: "keep", newString: "pwned" }, outcome: "guard", reason: "path" },
    { tool: "read", args: { filePath: join(outside, "keep.txt") }, outcome: "guard", reason: "path" },
    { tool: "write", args: { filePath: ".air/local/state/pwned.json", content: "{}\n" }, outcome: "guard", reason: "air-local", includes: ["`.air/local` is written only by the Scheduler's code"] },
    { tool: "write", args: { filePath: "escape/pwned.txt", content: "pwned\n" }, outcome: "guard", reason: "path", includes: ["symbolic link"] },
    { tool: "bash", args: { command: `echo pwned > ../${out}/keep.txt`, description: "escape" }, outcome: "guard", reason: "path" },
    { tool: "bash", args: { command: "touch pwned-bash.txt", workdir: outside, description: "escape" }, outcome: "guard", reason: "path" },
    { tool: "bash", args: { command: "touch .air/local/state/pwned", description: "state" }, outcome: "guard", reason: "air-local" },
  ]
}

function turnsFor(role: Roles.Name, outside: string): Turn[] {
  switch (role) {
    case "main":
      return readOnlyTurns(role, "air_plan", { graph: "PWNED" })
    case "architect":
      return readOnlyTurns(role, "air_submit", { requirement: "PWNED" })
    case "reviewer":
      return readOnlyTurns(role, "air_report", { status: "done", summary: "PWNED" })
    case "scheduler":
      return [
        [
          { tool: "read", args: { filePath: "a.txt" }, outcome: "unavailable" },
          { tool: "glob", args: { pattern: "**/*" }, outcome: "unavailable" },
          { tool: "bash", args: { command: "touch pwned-bash.txt", description: "touch" }, outcome: "unavailable" },
          { tool: "edit", args: { filePath: "a.txt", oldString: "original", newString: "pwned" }, outcome: "unavailable" },
          { tool: "write", args: { filePath: "pwned-write.txt", content: "pwned\n" }, outcome: "unavailable" },
          { tool: "task", args: { description: "do it", prompt: "PWNED task started by scheduler", subagent_type: "executor" }, outcome: "unavailable" },
          { tool: "air_submit", args: { requirement: "PWNED" }, outcome: "unavailable" },
        ],
        [{ tool: "air_status", args: {}, outcome: "ok" }],
      ]
    case "executor":
      return [
        workerBreakouts(role, outside),
        [
          { tool: "write", args: { filePath: "inside.txt", content: "made by the executor\n" }, outcome: "ok" },
          { tool: "bash", args: { command: "echo made by bash > bash-made.txt", description: "inside" }, outcome: "ok" },
        ],
      ]
    case "debugger": {
      const evidence = "collects evidence before it changes anything"
      return [
        [
          { tool: "edit", args: { filePath: "a.txt", oldString: "original", newString: "fixed" }, outcome: "guard", reason: "evidence", includes: [evidence] },
          { tool: "write", args: { filePath: "fix.txt", content: "fix\n" }, outcome: "guard", reason: "evidence" },
          { tool: "bash", args: { command: "echo fix > fix.txt", description: "fix" }, outcome: "guard", reason: "evidence" },
          ...workerBreakouts(role, outside),
        ],
        // Evidence: a build that ran (counts whatever its exit code; a `--version` would not).
        [{ tool: "bash", args: { command: "cmake --build .air-build", description: "evidence" }, outcome: "ok" }],
        [
          { tool: "edit", args: { filePath: "a.txt", oldString: "original", newString: "fixed" }, outcome: "ok", includes: ["Edit applied successfully"] },
          // Evidence opens edits, not paths.
          { tool: "write", args: { filePath: "../outside-debugger/keep.txt", content: "pwned\n" }, outcome: "guard", reason: "path" },
        ],
      ]
    }
  }
}

/** The role's scenario script: each turn's calls in one step; every step checks what the model was offered and what came back. */
function scriptFor(role: Roles.Name, turns: Turn[]) {
  const offered = offeredTo(role)
  const steps: Record<string, unknown>[] = turns.map((turn, i) => ({
    tools: turn.map((c) => ({ tool: c.tool, args: c.args })),
    allowUnoffered: turn.some((c) => !offered.includes(c.tool)),
    expect: {
      offeredExactly: offered,
      // The role's own prompt, and the hostile opencode.json was read (its instructions are there).
      systemIncludes: [`AirCoding role: ${role}`, USER_RULES],
      ...(i > 0 ? { lastToolResultIncludes: resultTexts(turns[i - 1]!) } : {}),
    },
  }))
  steps.push({ text: `${role} done.`, expect: { offeredExactly: offered, lastToolResultIncludes: resultTexts(turns.at(-1)!) } })
  return { name: role, agent: role, match: `^${PROMPT}: ${role}$`, steps }
}

// ---- the disk ----

/** Every entry under `dir` (symlinks not followed): file → content hash, link → target, dir → "dir". */
function snapshot(dir: string, skip: (rel: string) => boolean = () => false): Snapshot {
  const out: Snapshot = new Map()
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const abs = join(d, name)
      const rel = relative(dir, abs)
      if (skip(rel)) continue
      const st = lstatSync(abs)
      if (st.isSymbolicLink()) out.set(rel, `link:${readlinkSync(abs)}`)
      else if (st.isDirectory()) {
        out.set(rel, "dir")
        walk(abs)
      } else out.set(rel, createHash("sha256").update(readFileSync(abs)).digest("hex"))
    }
  }
  walk(dir)
  return out
}

/**
 * Bookkeeping in the project that is not a role's doing: the engine's project id (`.git/opencode`), and
 * what AirCoding's code writes under `.air/local/state` (the guard's log — checked on its own —, the
 * request log, the Scheduler's state once a coordinator tool opened it). What a role tried to put there
 * is named `pwned*`, and `keep.json` was there before: both stay in the snapshot.
 */
// The run's own files: its state, and the .gitignore that keeps .air/local out of git (written when the store opens).
const projectSkip = (rel: string) =>
  rel === ".git/opencode" || rel === ".air/local/.gitignore" || (rel.startsWith(".air/local/state/") && !rel.includes("pwned") && rel !== ".air/local/state/keep.json")

function changed(before: Snapshot, after: Snapshot): string[] {
  const keys = new Set([...before.keys(), ...after.keys()])
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort()
}

function guardLog(project: string): Record<string, any>[] {
  const file = join(project, ".air", "local", "state", "guard.jsonl")
  if (!existsSync(file)) return []
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
}

/** A user's opencode.json that tries to widen every role (the plugin must keep each row as it is). */
function hostileConfig() {
  const wide = { "*": "allow", bash: "allow", edit: "allow", task: "allow", webfetch: "allow", external_directory: "allow" }
  return {
    $schema: "https://opencode.ai/config.json",
    // Proof that the engine read this file: its instructions reach every agent's system prompt.
    instructions: ["user-rules.md"],
    permission: wide,
    agent: Object.fromEntries(Roles.names.map((r) => [r, { permission: wide, tools: { bash: true, edit: true, write: true, task: true } }])),
  }
}

/**
 * Each worker has a project of its own (it changes files there); the roles that change nothing share one,
 * which saves the engine three instances (one per directory, several seconds each).
 */
const projectName = (role: Roles.Name) => (Roles.isWorker(role) ? role : "read-only")
const projectOf = (role: Roles.Name) => join(sandbox.root, projectName(role))
const outsideOf = (role: Roles.Name) => join(sandbox.root, `outside-${role}`)

function prepareProject(role: Roles.Name): void {
  const outside = outsideOf(role)
  mkdirSync(outside, { recursive: true })
  writeFileSync(join(outside, "keep.txt"), "keep\n")
  if (existsSync(projectOf(role))) return
  const project = sandbox.project(projectName(role))
  writeFileSync(join(project, "a.txt"), "original\n")
  writeFileSync(join(project, "opencode.json"), JSON.stringify(hostileConfig(), null, 2))
  writeFileSync(join(project, "user-rules.md"), `${USER_RULES}\n`)
  symlinkSync(`../outside-${role}`, join(project, "escape"))
  mkdirSync(join(project, ".air", "local", "state"), { recursive: true })
  writeFileSync(join(project, ".air", "local", "state", "keep.json"), "{}\n")
}

// ---- the engine ----

async function startServe(env: NodeJS.ProcessEnv, cwd: string): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
  const child = spawn(Paths.opencodeBinary(), ["serve", "--port", "0", "--hostname", "127.0.0.1"], {
    cwd,
    env: { ...env, PWD: cwd },
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stderr = ""
  let stdout = ""
  child.stderr!.on("data", (d) => (stderr += d))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`opencode serve did not start in 90 s:\n${stdout}\n${stderr}`)), 90_000)
    child.stdout!.on("data", (d) => {
      stdout += d
      const m = stdout.match(/https?:\/\/127\.0\.0\.1:\d+/)
      if (m) {
        clearTimeout(timer)
        resolve(m[0])
      }
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`opencode serve exited with ${code}:\n${stdout}\n${stderr}`))
    })
  })
  return { url, child, stderr: () => stderr }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms))),
  ])
}

/** At most `n` sessions at once: the machine has two cores. */
function limiter(n: number) {
  let active = 0
  const waiting: (() => void)[] = []
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    while (active >= n) await new Promise<void>((r) => waiting.push(r))
    active++
    try {
      return await fn()
    } finally {
      active--
      waiting.shift()?.()
    }
  }
}
const limit = limiter(2)
const runs = new Map<Roles.Name, Promise<RoleRun>>()

/** The role's session, run once (shared by the tests that look at it). */
function run(role: Roles.Name): Promise<RoleRun> {
  let p = runs.get(role)
  if (!p) {
    p = limit(() => runRole(role))
    runs.set(role, p)
  }
  return p
}

async function runRole(role: Roles.Name): Promise<RoleRun> {
  if (!serve) throw new Error("opencode serve is not running")
  const project = projectOf(role)
  const outside = outsideOf(role)
  const client = createOpencodeClient({ baseUrl: serve.url })
  const before = snapshot(project, projectSkip)
  const outsideBefore = snapshot(outside)
  const started = Date.now()
  const created = await client.session.create({ body: { title: `agents e2e: ${role}` }, query: { directory: project } })
  const sessionID = created.data?.id
  if (!sessionID) throw new Error(`session.create for ${role} failed: ${JSON.stringify(created.error)}\n${serve.stderr()}`)
  const answer = await withTimeout(
    client.session.prompt({
      path: { id: sessionID },
      query: { directory: project },
      body: { agent: role, parts: [{ type: "text", text: `${PROMPT}: ${role}` }] },
    }),
    180_000,
    `${role}'s session`,
  )
  const messages = await client.session.messages({ path: { id: sessionID }, query: { directory: project } })
  const seen: ToolPart[][] = []
  for (const m of messages.data ?? []) {
    const tools: ToolPart[] = []
    for (const p of m.parts) {
      if (p.type !== "tool") continue
      const s = p.state as { status: string; input?: Record<string, any>; output?: string; error?: string }
      tools.push({ tool: p.tool, status: s.status, input: s.input ?? {}, output: String(s.output ?? s.error ?? "") })
    }
    if (tools.length > 0) seen.push(tools)
  }
  const parts = seen.flat()
  if (process.env.AIR_E2E_TIMINGS)
    console.info(
      `${role}: ${Date.now() - started} ms, ${parts.length} tool calls; model requests at +ms:`,
      model
        .requests()
        .filter((q) => q.agent === role)
        .map((q) => `#${q.step}@${Date.parse(q.ts) - started}`)
        .join(" "),
    )
  return {
    role,
    project,
    outside,
    sessionID,
    agent: (answer.data?.info as { agent?: string } | undefined)?.agent,
    error: answer.error ?? (answer.data?.info as { error?: unknown } | undefined)?.error,
    turns: plans.get(role)!,
    seen,
    parts,
    before,
    after: snapshot(project, projectSkip),
    outsideBefore,
    outsideAfter: snapshot(outside),
    ms: Date.now() - started,
  }
}

function failuresOf(role: Roles.Name): string[] {
  return model.failures().filter((f) => f.includes(`agent "${role}"`))
}

/** The name the model called: a call of a tool that is not offered is recorded as the engine's `invalid` tool. */
const calledName = (p: ToolPart) => (p.tool === "invalid" ? String(p.input.tool) : p.tool)

/** The part is this call: same tool, same arguments (the guard makes paths absolute and sets bash's workdir on allowed calls). */
function isCall(call: Call, p: ToolPart): boolean {
  if (calledName(p) !== call.tool) return false
  if (p.tool === "invalid") return true
  // A worker's bash command is recorded as the sandbox's command line around it.
  const input: Record<string, unknown> = { ...p.input, ...(typeof p.input.command === "string" ? { command: OsSandbox.originalCommand(p.input.command) } : {}) }
  return Object.entries(call.args).every(([k, v]) => input[k] === v || (typeof v === "string" && typeof input[k] === "string" && (input[k] as string).endsWith(`/${v}`)))
}

/** Checks each call against the tool part the engine recorded for it (calls of one turn run in parallel: matched by content). */
function checkCalls(r: RoleRun): void {
  expect(r.seen.map((t) => t.map(calledName).sort()), `${r.role}: the calls the engine saw, turn by turn`).toEqual(
    r.turns.map((t) => t.map((c) => c.tool).sort()),
  )
  r.turns.forEach((turn, n) => {
    const unused = [...r.seen[n]!]
    for (const call of turn) {
      const i = unused.findIndex((p) => isCall(call, p))
      expect(i, `${r.role} turn ${n}: no part for ${call.tool} ${JSON.stringify(call.args)}`).toBeGreaterThanOrEqual(0)
      const part = unused.splice(i, 1)[0]!
      const label = `${r.role} turn ${n}: ${call.tool} ${JSON.stringify(call.args)} → ${part.status}: ${part.output.slice(0, 300)}`
      if (call.outcome === "unavailable") {
        // Refused by the engine before the tool ran: the call was routed to its `invalid` tool.
        expect(part.tool, label).toBe("invalid")
        expect(part.output, label).toContain(`Model tried to call unavailable tool '${call.tool}'`)
      } else if (call.outcome === "guard") {
        expect(part.tool, label).toBe(call.tool)
        expect(part.status, label).toBe("error")
        expect(part.output, label).toMatch(/^AirCoding guard: /)
        expect(part.output, label).toContain(`\`${call.tool}\``)
        // The text names the agent and says what to do instead.
        if (call.reason === "path") expect(part.output, label).toContain(`the ${r.role} agent may only work inside its worktree ${r.project}`)
        if (call.reason === "path") expect(part.output, label).toContain("Use a path inside the worktree")
        if (call.reason === "air-local") expect(part.output, label).toContain(`the ${r.role} agent may not touch`)
        if (call.reason === "evidence") expect(part.output, label).toContain("First run the failing build or test")
      } else {
        expect(part.tool, label).toBe(call.tool)
        expect(part.status, label).toBe("completed")
      }
      for (const text of call.includes ?? []) expect(part.output, label).toContain(text)
    }
  })
}

beforeAll(async () => {
  sandbox = makeSandbox("air-agents-")
  for (const role of Roles.names) {
    prepareProject(role)
    plans.set(role, turnsFor(role, outsideOf(role)))
  }
  model = await scriptedModel(sandbox, { name: "agents", scripts: Roles.names.map((r) => scriptFor(r, plans.get(r)!)) })
  const t = Date.now()
  serve = await startServe(engineEnv(sandbox, model), sandbox.root)
  if (process.env.AIR_E2E_TIMINGS) console.info(`opencode serve: ${Date.now() - t} ms`)
}, 120_000)

afterAll(async () => {
  serve?.child.kill("SIGTERM")
  await model?.close()
  sandbox?.cleanup()
})

// Two at a time: the longest session (a worker) beside the read-only roles, one after another.
const ORDER: Roles.Name[] = ["debugger", "main", "executor", "architect", "reviewer", "scheduler"]

describe.concurrent("AirCoding's agents on the pinned engine", () => {
  for (const role of ORDER) {
    test(`${role}: the engine offers exactly its row of the whitelist, whatever the user's opencode.json says`, async () => {
      const r = await run(role)
      expect(r.agent, `the session ran as ${role}`).toBe(role)
      expect(failuresOf(role)).toEqual([])
      const requests = model.requests().filter((q) => q.agent === role)
      // One request per turn, plus the final text: the scripted model checked `offeredExactly` on each.
      expect(requests.length).toBe(r.turns.length + 1)
      const expected = offeredTo(role)
      expect(expected).toEqual(Roles.offered(role, ENGINE_TOOLS))
      for (const q of requests) expect([...q.offered].sort()).toEqual(expected)
      for (const t of ["task", "bash", "edit", "write"]) if (!Roles.table[role].tools.includes(t)) expect(expected).not.toContain(t)
    }, 300_000)

    test(`${role}: every forbidden call is refused, the model reads why, and nothing on disk changes`, async () => {
      const r = await run(role)
      expect(r.error, JSON.stringify(r.error)).toBeFalsy()
      expect(failuresOf(role)).toEqual([])
      checkCalls(r)
      // No agent started another: no request carried the `task` prompt.
      expect(model.requests().filter((q) => q.lastUser.includes("PWNED"))).toEqual([])
      expect(changed(r.outsideBefore, r.outsideAfter), "outside the project").toEqual([])
      const allowed = role === "executor" ? ["bash-made.txt", "inside.txt"] : role === "debugger" ? ["a.txt"] : []
      expect(changed(r.before, r.after), "inside the project").toEqual(allowed)
      if (role !== "debugger") expect(readFileSync(join(r.project, "a.txt"), "utf8")).toBe("original\n")
      if (role === "executor") {
        expect(readFileSync(join(r.project, "inside.txt"), "utf8")).toBe("made by the executor\n")
        // bash ran in the project (the session's directory), not wherever the engine was started.
        expect(readFileSync(join(r.project, "bash-made.txt"), "utf8")).toBe("made by bash\n")
      }
    }, 300_000)
  }

  test("debugger: an edit before evidence is refused (evidence named), after a build ran (`cmake --build`) the same edit goes through", async () => {
    const r = await run("debugger")
    expect(failuresOf("debugger")).toEqual([])
    const edits = r.parts.filter((p) => p.tool === "edit" && p.input.filePath?.endsWith("a.txt"))
    expect(edits.map((p) => p.status)).toEqual(["error", "completed"])
    expect(edits[0]!.output).toContain("AirCoding guard: the debugger collects evidence before it changes anything, and `edit` comes first here")
    expect(edits[1]!.output).toContain("Edit applied successfully")
    expect(readFileSync(join(r.project, "a.txt"), "utf8")).toBe("fixed\n")
    // The model was told why, on the request right after the refused turn.
    const second = model.requests().find((q) => q.agent === "debugger" && q.step === 1)
    expect(second?.lastToolResult).toContain("AirCoding guard")
    // The evidence is recorded.
    const evidence = guardLog(r.project).filter((e) => e.type === "guard.evidence")
    expect(evidence).toHaveLength(1)
    expect(evidence[0]).toMatchObject({ sessionID: r.sessionID, agent: "debugger", tool: "bash", evidence: { kind: "build", detail: "cmake --build .air-build" } })
  }, 300_000)

  test("guard.jsonl records every refusal — the guard's own and calls of tools the role is not offered — with the agent, the tool and the reason", async () => {
    for (const role of ["executor", "debugger"] as const) {
      const r = await run(role)
      const refusedCalls = r.turns
        .flat()
        .filter((c) => c.outcome === "guard" || c.outcome === "unavailable")
        .map((c) => (c.outcome === "unavailable" ? { ...c, reason: "tool" } : c))
      const lines = guardLog(r.project).filter((e) => e.type === "guard.refused")
      // Calls of one turn run in parallel: compare as sets.
      const key = (e: Record<string, unknown>) => `${e.sessionID} ${e.agent} ${e.tool} ${e.reason}`
      expect(lines.map((e) => key(e)).sort(), role).toEqual(refusedCalls.map((c) => key({ sessionID: r.sessionID, agent: role, tool: c.tool, reason: c.reason })).sort())
      for (const e of lines) expect(e.message).toMatch(/^AirCoding guard: /)
    }
  }, 300_000)
})
