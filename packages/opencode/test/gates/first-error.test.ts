import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { firstError } from "../../src/scheduler/runtime/gates/build"

/** What the Debugger is shown first of a failed build: the real g++ and ld, on files made here. */
describe("firstError: the line a person would look at", () => {
  const dir = mkdtempSync(join(tmpdir(), "air-first-error-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const build = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    const r = spawnSync("g++", ["-o", join(dir, "app"), ...Object.keys(files).map((f) => join(dir, f))], { encoding: "utf8" })
    expect(r.status).not.toBe(0)
    return `${r.stdout}${r.stderr}`
  }

  it("a symbol defined twice: the linker's 'multiple definition', not collect2's exit status", () => {
    const output = build({ "main.cpp": "int main() { return 0; }\n", "a.cpp": "int helper() { return 1; }\n", "b.cpp": "int helper() { return 2; }\n" })
    expect(output).toMatch(/collect2: error/)
    expect(firstError(output)).toMatch(/multiple definition of .helper\(\)/)
  })

  it("a symbol never defined: the linker's 'undefined reference'", () => {
    const output = build({ "main.cpp": "int helper();\nint main() { return helper(); }\n" })
    expect(firstError(output)).toMatch(/undefined reference to .helper\(\)/)
  })

  it("a compile error still comes first, with its file and line", () => {
    const output = build({ "main.cpp": "int main() { return nothing; }\n" })
    expect(firstError(output)).toMatch(/main\.cpp:1:\d+: error: .nothing. was not declared/)
  })
})
