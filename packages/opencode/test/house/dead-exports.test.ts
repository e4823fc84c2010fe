import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { deadExports, PUBLIC } from "../../scripts/dead-exports"

const scratch = mkdtempSync(join(tmpdir(), "air-dead-exports-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("no export that nothing imports (scripts/dead-exports.ts)", () => {
  it("src/ has none outside the public API's allow-list", () => {
    expect(deadExports()).toEqual([])
  })

  it("the allow-list names only exports that exist and are otherwise unused (no stale entry)", () => {
    expect(deadExports(undefined, [])).toEqual([...PUBLIC].sort())
  })

  it("finds a planted one: exported, spelled in no other file; a default export and an allowed name are kept", () => {
    mkdirSync(join(scratch, "src"), { recursive: true })
    mkdirSync(join(scratch, "test"), { recursive: true })
    writeFileSync(
      join(scratch, "src/a.ts"),
      ["export function used() {}", "export const unusedConst = 1", "export type Unused = string", "const local = 2", "export { local as renamed }", "export default {}", "export const allowed = 3", "export namespace Ns {", "  export function member() {}", "}"].join("\n"),
    )
    writeFileSync(join(scratch, "src/b.ts"), 'import { used } from "./a"\nused()\n')
    writeFileSync(join(scratch, "test/ns.test.ts"), 'import { Ns } from "../src/a"\n')
    expect(deadExports(scratch, ["src/a.ts:allowed"])).toEqual(["src/a.ts:Unused", "src/a.ts:renamed", "src/a.ts:unusedConst"])
    expect(deadExports(scratch, ["src/a.ts:allowed"], { members: true })).toContain("src/a.ts:member")
  })
})
