import { existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { SOAK_FILES, suiteExcludes } from "../../../../test/stages"

const ROOT = join(import.meta.dirname, "..", "..", "..", "..")

describe("the soak stage's files (test/stages.ts)", () => {
  test("each exists and is a test file of the processes (e2e, runtime), so a misspelt entry cannot drop a file from both stages", () => {
    for (const file of SOAK_FILES) {
      expect(existsSync(join(ROOT, file)), file).toBe(true)
      expect(file, file).toMatch(/^packages\/opencode\/test\/(e2e|runtime)\/[a-z0-9-]+\.test\.ts$/)
    }
    expect(new Set(SOAK_FILES).size).toBe(SOAK_FILES.length)
  })

  test("the suite leaves them out only when it runs whole; a file named on the command line still runs", () => {
    expect(suiteExcludes({ AIR_STAGE: "suite" }, ["vitest", "run"])).toEqual([...SOAK_FILES])
    expect(suiteExcludes({}, ["vitest", "run"])).toEqual([])
    const named = suiteExcludes({ AIR_STAGE: "suite" }, ["vitest", "run", "packages/opencode/test/e2e/faults.test.ts"])
    expect(named).not.toContain("packages/opencode/test/e2e/faults.test.ts")
    expect(named).toHaveLength(SOAK_FILES.length - 1)
  })
})
