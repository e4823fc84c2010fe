import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { ConfigDirs, Pin } from "../../src/engine"

const made: string[] = []
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "air-cfg-"))
  made.push(d)
  return d
}
afterEach(() => made.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })))

describe("config dirs are prepared so the engine never waits on its start-up install", () => {
  test("an empty config dir gets the pinned plugin package, its lock and linked node_modules", () => {
    const dir = join(temp(), "opencode")
    expect(ConfigDirs.prepare(dir).action).toBe("linked")
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).dependencies["@opencode-ai/plugin"]).toBe(Pin.engineVersion())
    expect(existsSync(join(dir, "package-lock.json"))).toBe(true)
    expect(lstatSync(join(dir, "node_modules")).isSymbolicLink()).toBe(true)
    expect(existsSync(join(dir, "node_modules", "@opencode-ai", "plugin", "package.json"))).toBe(true)
    expect(ConfigDirs.prepare(dir).action).toBe("ready")
  })

  test("a config dir with the user's own dependencies is left alone, with a note", () => {
    const dir = join(temp(), "opencode")
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), JSON.stringify({ dependencies: { "some-plugin": "1.0.0" } }))
    const outcome = ConfigDirs.prepare(dir)
    expect(outcome.action).toBe("skipped")
    expect(outcome.note).toMatch(/own dependencies/)
    expect(existsSync(join(dir, "node_modules"))).toBe(false)
  })

  test("the global dir follows XDG_CONFIG_HOME, and a project's .opencode is included when present", () => {
    const root = temp()
    const project = join(root, "p")
    mkdirSync(join(project, ".opencode"), { recursive: true })
    const dirs = ConfigDirs.forProject(project, { XDG_CONFIG_HOME: join(root, "xdg") })
    expect(dirs).toEqual([join(root, "xdg", "opencode"), join(project, ".opencode")])
  })
})
