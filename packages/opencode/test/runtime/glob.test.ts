import { describe, expect, it } from "vitest"
import { Glob } from "../../src/scheduler/runtime/glob/glob.ts"

describe("Glob: rule-file globs as teams write them", () => {
  it.each([
    ["build/test-results/*.xml", "build/test-results/TEST-a.xml", true],
    ["build/test-results/*.xml", "build/test-results/sub/TEST-a.xml", false],
    ["a/**/b", "a/b", true],
    ["a/**/b", "a/x/y/b", true],
    ["a/**/b", "a/xb", false],
    ["**/*.pem", "server.pem", true],
    ["**/*.pem", "deep/in/tls/server.pem", true],
    ["test/fixtures/**", "test/fixtures/keys/.env", true],
    ["src/?.cpp", "src/a.cpp", true],
    ["src/?.cpp", "src/ab.cpp", false],
  ])("%s against %s: %s", (glob, file, matches) => {
    expect(Glob.toRegExp(glob).test(file)).toBe(matches)
  })
})
