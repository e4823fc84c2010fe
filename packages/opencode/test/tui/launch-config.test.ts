import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, expect, test } from "vitest"
import { LaunchConfig } from "../../src/engine"

/** What the launcher gives the TUI: a tui.json naming our plugin, and no model-prompt twins of its commands. */
const made: string[] = []
afterEach(() => made.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })))
const home = () => {
  const d = mkdtempSync(join(tmpdir(), "air-tuicfg-"))
  made.push(d)
  return { XDG_CONFIG_HOME: d } as NodeJS.ProcessEnv
}

test("the TUI config names the plugin file, which exists, and keeps the user's own TUI plugins and settings", () => {
  const env = home()
  const user = join(env.XDG_CONFIG_HOME!, "mine.json")
  writeFileSync(user, JSON.stringify({ theme: "nord", plugin: ["file:///somewhere/theirs.tsx"] }))
  const out = LaunchConfig.tuiEnvironment({ ...env, OPENCODE_TUI_CONFIG: user })
  const written = JSON.parse(readFileSync(out.OPENCODE_TUI_CONFIG!, "utf8"))
  expect(written.plugin).toEqual([LaunchConfig.tuiPluginSpec, "file:///somewhere/theirs.tsx"])
  expect(written.theme).toBe("nord")
  // The home tips (they suggest `opencode upgrade`, which breaks the pin) are off.
  expect(written.plugin_enabled).toMatchObject({ "internal:home-tips": false })
  expect(existsSync(fileURLToPath(LaunchConfig.tuiPluginSpec))).toBe(true)
  expect(out.OPENCODE_TUI_CONFIG!.startsWith(env.XDG_CONFIG_HOME!)).toBe(true)
})

test("the /air-* commands the plugin registers leave the engine config; the rest stays", () => {
  const env = LaunchConfig.environment({}, home())
  expect(Object.keys(JSON.parse(env.OPENCODE_CONFIG_CONTENT!).command)).toEqual(expect.arrayContaining([...LaunchConfig.TUI_PLUGIN_COMMANDS]))
  const out = LaunchConfig.tuiEnvironment(env)
  const cfg = JSON.parse(out.OPENCODE_CONFIG_CONTENT!)
  for (const name of LaunchConfig.TUI_PLUGIN_COMMANDS) expect(cfg.command?.[name]).toBeUndefined()
  expect(cfg.plugin).toEqual(JSON.parse(env.OPENCODE_CONFIG_CONTENT!).plugin)
})

test("a TUI config that is not JSON is said, not ignored", () => {
  const env = home()
  const bad = join(env.XDG_CONFIG_HOME!, "bad.json")
  writeFileSync(bad, "{ nope")
  expect(() => LaunchConfig.tuiEnvironment({ ...env, OPENCODE_TUI_CONFIG: bad })).toThrow(/OPENCODE_TUI_CONFIG/)
})

test("with the scripted model the engine gets the empty models catalogue; without a provider of ours, or with the user's own, it does not", () => {
  const overlay = { provider: { scripted: { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://127.0.0.1:1/v1" } } }, model: "scripted/scripted" }
  const scripted = LaunchConfig.environment({ overlay, offline: true }, {})
  expect(scripted.OPENCODE_MODELS_PATH).toBe(LaunchConfig.OFFLINE_MODELS)
  expect(JSON.parse(readFileSync(LaunchConfig.OFFLINE_MODELS, "utf8"))).toEqual({})
  expect(LaunchConfig.environment({ offline: true }, {}).OPENCODE_MODELS_PATH).toBeUndefined()
  expect(LaunchConfig.environment({}, {}).OPENCODE_MODELS_PATH).toBeUndefined()
  expect(LaunchConfig.environment({ overlay, offline: true }, { OPENCODE_MODELS_PATH: "/theirs.json" }).OPENCODE_MODELS_PATH).toBe("/theirs.json")
})
