import { readdirSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { loadScenario } from "../src/index.ts"

// The README points at these files: they must stay valid as the format evolves.
const examples = resolve(import.meta.dirname, "../examples")

describe("example scenarios", () => {
  const files = readdirSync(examples).filter((f) => f.endsWith(".json"))
  it("exist", () => expect(files.length).toBeGreaterThan(0))
  for (const f of files) it(`${f} is a valid scenario`, () => expect(loadScenario(join(examples, f)).scripts.length).toBeGreaterThan(0))
})
