import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { SOAK_FILES, suiteExcludes } from "../../../../test/stages"

const ROOT = join(import.meta.dirname, "..", "..", "..", "..")

describe("the soak stage's files (test/stages.ts)", () => {
  test("each exists and is a test file of the processes (e2e, cli, runtime, toolchain, engine), so a misspelt entry cannot drop a file from both stages", () => {
    for (const file of SOAK_FILES) {
      expect(existsSync(join(ROOT, file)), file).toBe(true)
      expect(file, file).toMatch(/^packages\/opencode\/test\/(e2e|cli|runtime|toolchain|engine)\/[a-z0-9-]+\.test\.ts$/)
    }
    expect(new Set(SOAK_FILES).size).toBe(SOAK_FILES.length)
  })

  test("every project of the suite's config leaves them out (a units file in the list ran in both stages)", () => {
    const config = readFileSync(join(ROOT, "vitest.config.ts"), "utf8")
    const projects = config.split("\n").filter((l) => /test: \{ name: "/.test(l))
    expect(projects.length).toBeGreaterThanOrEqual(2)
    for (const line of projects) expect(line, line.trim()).toMatch(/exclude: [^}]*SOAK_ONLY/)
  })

  test("the suite leaves them out only when it runs whole; a file named on the command line still runs", () => {
    expect(suiteExcludes({ AIR_STAGE: "suite" }, ["vitest", "run"])).toEqual([...SOAK_FILES])
    expect(suiteExcludes({}, ["vitest", "run"])).toEqual([])
    const named = suiteExcludes({ AIR_STAGE: "suite" }, ["vitest", "run", "packages/opencode/test/e2e/faults.test.ts"])
    expect(named).not.toContain("packages/opencode/test/e2e/faults.test.ts")
    expect(named).toHaveLength(SOAK_FILES.length - 1)
  })
})

/** The test files under packages/opencode/test that run only when a variable is set, with that variable. */
function gatedFiles(): { file: string; variable: string }[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".test.ts") ? [join(dir, d.name)] : []))
  return walk(join(ROOT, "packages", "opencode", "test")).flatMap((path) => {
    const m = readFileSync(path, "utf8").match(/\.skipIf\(!process\.env\.(\w+)\)/)
    return m ? [{ file: path.slice(ROOT.length + 1), variable: m[1]! }] : []
  })
}

// A check CI runs another way: chaos.test.ts is the soak's chaos step (bench/chaos.ts) as a vitest file.
const RUN_OTHERWISE: Record<string, string> = { "packages/opencode/test/e2e/chaos.test.ts": "packages/opencode/bench/chaos.ts" }

describe("the test files that run only when a variable is set", () => {
  test("each is a step of the soak that sets its variable (or CI runs its check another way), so none is never run", () => {
    const soak = readFileSync(join(ROOT, "packages", "opencode", "bench", "soak.ts"), "utf8")
    const gated = gatedFiles()
    expect(gated.map((g) => g.file)).toContain("packages/opencode/test/tui/screens.e2e.test.ts")
    for (const { file, variable } of gated) {
      if (RUN_OTHERWISE[file]) {
        expect(soak, file).toContain(RUN_OTHERWISE[file]!.replace("packages/opencode/", ""))
        continue
      }
      expect(soak, `${file} is in no soak step`).toContain(file)
      // The step that names the file sets its variable.
      const at = soak.indexOf(file)
      const step = soak.slice(soak.lastIndexOf("{\n", at), soak.indexOf("\n  },", at))
      expect(step, `${file}'s soak step does not set ${variable}`).toContain(`${variable}: "1"`)
    }
  })
})

