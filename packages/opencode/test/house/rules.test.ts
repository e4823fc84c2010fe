import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, test } from "vitest"
import { HouseDoctor } from "../../src/scheduler/runtime/house/doctor.ts"
import { HouseRules } from "../../src/scheduler/runtime/house/rules.ts"

const file = (logging: Record<string, unknown>) => JSON.stringify({ schemaVersion: 1, logging })

function refusal(text: string): string {
  try {
    HouseRules.parse(text)
  } catch (err) {
    expect(err).toBeInstanceOf(HouseRules.Invalid)
    return (err as Error).message
  }
  throw new Error("the rules were accepted")
}

describe("house.json: the house rules are data with a schema", () => {
  test("a library's rule is filled with its defaults: spdlog's calls and package, tests exempt", () => {
    const loaded = HouseRules.parse(file({ library: "spdlog" }))
    expect(loaded.logging).toMatchObject({
      library: "spdlog",
      include: "<spdlog/spdlog.h>",
      cmake: { package: "spdlog", target: "spdlog::spdlog" },
      integrationFirst: true,
      allowNetwork: false,
    })
    expect(loaded.logging!.calls).toContain("spdlog::info")
    expect(loaded.logging!.forbidden.map((c) => c.call)).toEqual(["std::cout", "std::cerr", "printf", "fprintf(stdout|stderr)", "puts", "qDebug"])
    expect(loaded.logging!.exempt).toContain("tests/**")
    expect(loaded.warnings).toEqual([])
  })

  test("glog gets glog's calls; Qt's rule keeps qDebug (it is the library) and forbids the C streams", () => {
    expect(HouseRules.parse(file({ library: "glog" })).logging).toMatchObject({ include: "<glog/logging.h>", cmake: { package: "glog" } })
    const qt = HouseRules.parse(file({ library: "qt" })).logging!
    expect(qt.forbidden.map((c) => c.call)).not.toContain("qDebug")
    expect(qt.forbidden.map((c) => c.call)).toContain("std::cout")
  })

  test("the rule is turned off by enabled: false, and a file without logging has none", () => {
    expect(HouseRules.parse(file({ library: "spdlog", enabled: false })).logging).toBeUndefined()
    expect(HouseRules.parse(JSON.stringify({ schemaVersion: 1 })).logging).toBeUndefined()
  })

  test.each([
    ["a misspelt key, with the nearest known one", file({ library: "spdlog", exmept: ["tools/**"] }), "logging.exmept: unknown key; did you mean exempt?"],
    ["a misspelt top-level key", JSON.stringify({ schemaVersion: 1, loggin: { library: "spdlog" } }), "loggin: unknown key; did you mean logging?"],
    ["an unknown library, with the nearest known one", file({ library: "spdlgo" }), 'logging.library: unknown library "spdlgo"; did you mean spdlog?'],
    ["a library no one knows, with the list", file({ library: "log4cxx" }), "known: spdlog, glog, qt, own"],
    ["a forbidden call that is not a valid expression, with the reason", file({ library: "spdlog", forbidden: [{ call: "cout", pattern: "std::cout(" }] }), "logging.forbidden[0].pattern: not a valid regular expression"],
    ["the project's own library without its header", file({ library: "own", calls: ["LOG_INFO"] }), "logging.include: missing"],
    ["not JSON", "{ schemaVersion: 1", "not valid JSON"],
  ])("refused: %s", (_what, text, expected) => {
    const message = refusal(text)
    expect(message).toContain(expected)
    expect(message).toContain(HouseRules.RULES_PATH)
    expect(message).toContain("delete it")
  })

  test("an expression's reason is the engine's: the unterminated group is named", () => {
    expect(refusal(file({ library: "spdlog", forbidden: [{ call: "x", pattern: "(a" }] }))).toMatch(/Unterminated group|missing \)/i)
  })

  test("an exemption that matches every path is warned (allowed, but the gate would check nothing); a folder is not", () => {
    for (const glob of ["**", "**/*"]) {
      const loaded = HouseRules.parse(file({ library: "spdlog", exempt: ["tools/**", glob] }))
      expect(loaded.warnings).toHaveLength(1)
      expect(loaded.warnings[0]).toContain(`"${glob}" matches every path`)
    }
    expect(HouseRules.parse(file({ library: "spdlog", exempt: ["tools/**", "*"] })).warnings).toEqual([])
  })
})

describe("aircoding doctor shows the house rules", () => {
  test("the rule in one line, a warning with it, an invalid file failed with its fix, no file no line", async () => {
    const root = await mkdtemp(join(tmpdir(), "air-house-"))
    const write = async (rules: unknown) => {
      await mkdir(dirname(join(root, HouseRules.RULES_PATH)), { recursive: true })
      await writeFile(join(root, HouseRules.RULES_PATH), typeof rules === "string" ? rules : JSON.stringify(rules))
    }
    try {
      expect(HouseDoctor.checks(root)).toEqual([])
      await write({ schemaVersion: 1, logging: { library: "glog", exempt: ["**"] } })
      const [line] = HouseDoctor.checks(root)
      expect(line).toMatchObject({ name: "house rules", ok: true })
      expect(line!.detail).toContain("logging through glog (LOG(INFO)")
      expect(line!.detail).toContain("new code may not use std::cout, std::cerr, printf")
      expect(line!.detail).toContain('warning: logging.exempt "**" matches every path')
      await write({ schemaVersion: 1, logging: { library: "spdlog", enabled: false } })
      expect(HouseDoctor.checks(root)[0]!.detail).toContain("turned off")
      await write({ schemaVersion: 1, logging: { libary: "spdlog" } })
      expect(HouseDoctor.checks(root)[0]).toMatchObject({ ok: false, detail: expect.stringContaining("logging.libary: unknown key; did you mean library?"), fix: expect.stringContaining("aircoding init --redetect") })
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})
