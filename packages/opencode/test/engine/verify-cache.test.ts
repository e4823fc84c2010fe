import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { Roles } from "../../src/agent"
import { ConfigDirs, Paths } from "../../src/engine"
import { LaunchConfig } from "../../src/engine/launch-config"
import { Verify } from "../../src/engine/verify"
import { VerifyCache } from "../../src/engine/verify-cache"
import { makeSandbox } from "../support/sandbox"

const agents = Roles.names
const tools = Roles.coordinatorTools("main")

describe("the engine check's remembered answer", () => {
  const a = makeSandbox("air-vcache-a-")
  const b = makeSandbox("air-vcache-b-")
  afterAll(() => {
    a.cleanup()
    b.cleanup()
  })
  /** The engine binary behind a wrapper that counts its starts (AIRCODING_OPENCODE_BIN is read at each call). */
  function countingEngine(dir: string): { starts(): number; restore(): void } {
    const count = join(dir, "starts")
    const wrapper = join(dir, "opencode-counting")
    writeFileSync(count, "")
    writeFileSync(wrapper, `#!/bin/sh\necho x >> '${count}'\nexec '${Paths.opencodeBinary()}' "$@"\n`, { mode: 0o755 })
    const saved = process.env.AIRCODING_OPENCODE_BIN
    process.env.AIRCODING_OPENCODE_BIN = wrapper
    return {
      starts: () => readFileSync(count, "utf8").split("\n").filter(Boolean).length,
      restore: () => (saved === undefined ? delete process.env.AIRCODING_OPENCODE_BIN : (process.env.AIRCODING_OPENCODE_BIN = saved)),
    }
  }

  it("is keyed by what the engine reads, not by where: two HOMEs and projects with the same files share it, a port does not count", () => {
    const pa = a.project("p")
    const pb = b.project("q")
    const envA = LaunchConfig.environment({ offline: true, overlay: { provider: { s: { options: { baseURL: "http://127.0.0.1:4001/v1" } } } } }, a.env)
    const envB = LaunchConfig.environment({ offline: true, overlay: { provider: { s: { options: { baseURL: "http://127.0.0.1:5123/v1" } } } } }, b.env)
    expect(VerifyCache.key(pa, envA, agents, tools)).toBe(VerifyCache.key(pb, envB, agents, tools))
  })

  it("misses when a config file the engine reads says something else: global config, the project's opencode.json or .opencode/, an OPENCODE_ variable", () => {
    const dir = a.project("changes")
    const env = LaunchConfig.environment({ offline: true }, a.env)
    const before = VerifyCache.key(dir, env, agents, tools)
    const keys = new Set([before])
    writeFileSync(join(dir, "opencode.json"), JSON.stringify({ agent: { main: { disable: true } } }))
    keys.add(VerifyCache.key(dir, env, agents, tools))
    mkdirSync(join(dir, ".opencode", "agent"), { recursive: true })
    writeFileSync(join(dir, ".opencode", "agent", "main.md"), "---\ndisable: true\n---\n")
    keys.add(VerifyCache.key(dir, env, agents, tools))
    writeFileSync(join(ConfigDirs.globalConfigDir(a.env), "opencode.json"), JSON.stringify({ plugin: [] }))
    keys.add(VerifyCache.key(dir, env, agents, tools))
    keys.add(VerifyCache.key(dir, { ...env, OPENCODE_DISABLE_DEFAULT_PLUGINS: "1" }, agents, tools))
    keys.add(VerifyCache.key(dir, env, agents, [...tools, "air_more"]))
    expect(keys.size).toBe(6)
  })

  it("stays the same after the engine's first start and the TUI write their own files into the global config dir", () => {
    const dir = a.project("first-start")
    const env = LaunchConfig.environment({ offline: true }, { ...a.env, XDG_CONFIG_HOME: join(a.root, "fresh-config") })
    const before = VerifyCache.key(dir, env, agents, tools)
    // What the pinned engine writes on its first start (measured): a config that says only its schema, and a .gitignore.
    const global = ConfigDirs.globalConfigDir(env)
    mkdirSync(global, { recursive: true })
    writeFileSync(join(global, "opencode.jsonc"), '{\n  "$schema": "https://opencode.ai/config.json"\n}')
    writeFileSync(join(global, ".gitignore"), "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore")
    writeFileSync(join(global, "package.json"), JSON.stringify({ dependencies: { "@opencode-ai/plugin": "1.18.33" } }))
    LaunchConfig.tuiEnvironment(env)
    expect(VerifyCache.key(dir, env, agents, tools)).toBe(before)
    // The same file with something to say is config.
    writeFileSync(join(global, "opencode.jsonc"), '{ "$schema": "https://opencode.ai/config.json", "share": "disabled" }')
    expect(VerifyCache.key(dir, env, agents, tools)).not.toBe(before)
  })

  it("launches at once with the same inputs share one check: the engine is asked once", async () => {
    const dir = b.project("together")
    // A stand-in engine that answers as the real one does, slowly, and counts its starts: what is under test is the sharing.
    const count = join(b.root, "together-starts")
    const fake = join(b.root, "opencode-slow")
    const config = JSON.stringify({ agent: Object.fromEntries(agents.map((name) => [name, {}])) })
    const main = JSON.stringify({ tools: Object.fromEntries(tools.map((name) => [name, true])) })
    writeFileSync(count, "")
    writeFileSync(fake, `#!/bin/sh\necho x >> '${count}'\nsleep 1\nmkdir -p "$XDG_DATA_HOME/opencode" && touch "$XDG_DATA_HOME/opencode/opencode.db"\nif [ "$2" = config ]; then echo '${config}'; else echo '${main}'; fi\n`, { mode: 0o755 })
    const saved = process.env.AIRCODING_OPENCODE_BIN
    process.env.AIRCODING_OPENCODE_BIN = fake
    try {
      // A key of its own (a variable the engine ignores), so no earlier answer serves it.
      const env = { ...LaunchConfig.environment({ offline: true }, b.env), OPENCODE_AIRCODING_TEST_NONCE: `${process.pid}-${Date.now()}` }
      const results = await Promise.all([0, 1, 2].map(() => Verify.plugin(dir, env, agents, tools)))
      expect(results.map((r) => r.ok)).toEqual([true, true, true])
      expect(readFileSync(count, "utf8").split("\n").filter(Boolean).length).toBe(2)
    } finally {
      if (saved === undefined) delete process.env.AIRCODING_OPENCODE_BIN
      else process.env.AIRCODING_OPENCODE_BIN = saved
    }
  }, 60_000)

  it("serves a passing answer without starting the engine once it has a database; doctor's fresh check starts it", async () => {
    const dir = b.project("served")
    const env = LaunchConfig.environment({ offline: true }, b.env)
    const engine = countingEngine(b.root)
    try {
      const first = await Verify.plugin(dir, env, agents, tools, { fresh: true })
      expect(first.ok, first.ok ? "" : first.message).toBe(true)
      expect(engine.starts()).toBe(2)
      const again = await Verify.plugin(dir, env, agents, tools)
      expect(again.ok).toBe(true)
      expect(again.ok && again.agents).toEqual([...agents])
      expect(engine.starts()).toBe(2)
      const doctor = await Verify.plugin(dir, env, agents, tools, { fresh: true })
      expect(doctor.ok).toBe(true)
      expect(engine.starts()).toBe(4)
    } finally {
      engine.restore()
    }
  }, 120_000)

  it("never remembers a failure: a plugin that does not import fails, and the next launch asks again", async () => {
    const dir = b.project("broken")
    const broken = join(b.root, "broken-plugin.ts")
    writeFileSync(broken, 'import "./no-such-module"\nexport default { id: "x", server: async () => ({}) }\n')
    const base = LaunchConfig.environment({ offline: true }, b.env)
    const env = { ...base, OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...JSON.parse(base.OPENCODE_CONFIG_CONTENT!), plugin: [pathToFileURL(broken).href] }) }
    const result = await Verify.plugin(dir, env, agents, tools)
    expect(result.ok).toBe(false)
    // Nothing kept, so the next launch asks the engine again.
    expect(VerifyCache.lookup(VerifyCache.key(dir, env, agents, tools))).toBeUndefined()
  }, 120_000)
})
