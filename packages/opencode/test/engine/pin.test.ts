import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { Paths, Pin } from "../../src/engine"

const installedVersion = (name: string) =>
  JSON.parse(readFileSync(join(Paths.packageRoot, "node_modules", name, "package.json"), "utf8")).version as string

describe("the engine pin", () => {
  test("opencode-ai, @opencode-ai/plugin and @opencode-ai/sdk are declared at one exact version", () => {
    const declared = Pin.declared()
    expect(new Set(Object.values(declared)).size).toBe(1)
    expect(Pin.engineVersion()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  test("the installed packages are the pinned ones", () => {
    for (const name of Pin.packages) expect(installedVersion(name), name).toBe(Pin.engineVersion())
  })

  test("the config-dir template's lock holds the same plugin version", () => {
    const lock = JSON.parse(readFileSync(join(Paths.engineConfigDir, "package-lock.json"), "utf8"))
    const pkg = JSON.parse(readFileSync(join(Paths.engineConfigDir, "package.json"), "utf8"))
    expect(pkg.dependencies["@opencode-ai/plugin"]).toBe(Pin.engineVersion())
    expect(lock.packages["node_modules/@opencode-ai/plugin"].version).toBe(Pin.engineVersion())
  })

  test("a drifted pin is reported with the three versions and the fix", () => {
    const drifted = { "opencode-ai": "1.18.33", "@opencode-ai/plugin": "1.18.33", "@opencode-ai/sdk": "1.19.3" }
    expect(() => Pin.engineVersion(drifted)).toThrow(/drifted: opencode-ai@1.18.33, @opencode-ai\/plugin@1.18.33, @opencode-ai\/sdk@1.19.3/)
    expect(() => Pin.engineVersion({ a: "^1.18.33", b: "^1.18.33" })).toThrow(/exact version/)
  })
})
