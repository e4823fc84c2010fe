import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"
import { ImportGraph } from "../support/import-graph"

/**
 * A usage error or `--help` answers before the heavy modules load: the CLI's entry imports them only inside the
 * command that needs them (`import()`), so `aircoding stauts` is bun's start plus a few small files (measured: 0.8–1.1 s
 * against 3.6–5.3 s when main.ts reached the launcher statically, at a load of 25). This walks main.ts's static
 * imports and refuses one that reaches the engine, the roles, the runtime, the dashboard or the scripted model.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const HEAVY = /^(engine|agent|scheduler\/runtime|dashboard|tui|knowledge)\//

const MAIN = join(SRC, "cli/main.ts")

/** The chains of main.ts's static imports (what loads before a command runs) that reach a heavy file or the scripted model. */
function heavy(read?: (file: string) => string): string[] {
  const { files, packages } = ImportGraph.walk(SRC, MAIN, read ? { read } : {})
  return [...[...files].filter(([file]) => HEAVY.test(file)).map(([, chain]) => chain), ...[...packages].filter((p) => p === "@aircoding/scripted-model")]
}

describe("the CLI answers usage errors without loading the product", () => {
  test("main.ts's static imports reach none of the engine, the roles, the runtime or the scripted model", () => {
    expect(heavy()).toEqual([])
  })

  test("a planted static import of the launcher is refused, with the chain that brings the engine in", () => {
    const planted = (file: string) => (file.endsWith("cli/help.ts") ? `import { Launch } from "./launch"\n` : "") + readFileSync(file, "utf8")
    expect(heavy(planted)).toContain("cli/main.ts → cli/help.ts → cli/launch.ts → engine/index.ts")
  })
})
