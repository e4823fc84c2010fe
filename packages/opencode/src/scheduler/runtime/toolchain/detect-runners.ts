import { readFile, stat } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"

/**
 * The test runners a project without a CMake, Meson or Make build declares by its files at the top: pytest
 * (pytest.ini, a `[tool.pytest…]` table in pyproject.toml, `[tool:pytest]` in setup.cfg, `[pytest]` in
 * tox.ini, a conftest.py), vitest or jest (package.json's dependencies), go test (go.mod), cargo test
 * (Cargo.toml). The test gate recognises each command's runner (gates/runners/) and reads it per test.
 */
export namespace DetectRunners {
  export interface Found {
    framework: "pytest" | "vitest" | "jest" | "go" | "cargo"
    build?: string
    test: string
    /** Which file said so, for the note people read. */
    because: string
  }

  export const COMPILE_PYTHON = "python3 -m compileall -q -x '/(\\.|node_modules/)' ."

  const PackageJson = z
    .object({
      dependencies: z.record(z.string(), z.unknown()).optional(),
      devDependencies: z.record(z.string(), z.unknown()).optional(),
    })
    .passthrough()

  /** What the top of `dir` declares, in a fixed order; `problems` names a file that says something unreadable. */
  export async function run(dir: string): Promise<{ found: Found[]; problems: string[] }> {
    const found: Found[] = []
    const problems: string[] = []
    const pytest = await pytestFile(dir)
    // Python has no build; compiling every module is the check that it would load (hidden dirs and node_modules left out).
    if (pytest) found.push({ framework: "pytest", build: COMPILE_PYTHON, test: "python3 -m pytest -q", because: pytest })
    const pkg = await text(path.join(dir, "package.json"))
    if (pkg !== undefined) {
      const parsed = parseJson(pkg)
      const checked = parsed === undefined ? undefined : PackageJson.safeParse(parsed)
      if (!checked?.success) problems.push("package.json does not parse: no vitest or jest detected from it")
      else {
        const deps = { ...checked.data.dependencies, ...checked.data.devDependencies }
        if ("vitest" in deps) found.push({ framework: "vitest", test: "npx vitest run", because: "package.json (vitest)" })
        else if ("jest" in deps) found.push({ framework: "jest", test: "npx jest", because: "package.json (jest)" })
      }
    }
    if (await isFile(path.join(dir, "go.mod"))) found.push({ framework: "go", build: "go build ./...", test: "go test ./...", because: "go.mod" })
    if (await isFile(path.join(dir, "Cargo.toml"))) found.push({ framework: "cargo", build: "cargo build", test: "cargo test", because: "Cargo.toml" })
    return { found, problems }
  }

  async function pytestFile(dir: string): Promise<string | undefined> {
    if (await isFile(path.join(dir, "pytest.ini"))) return "pytest.ini"
    const tables: [string, RegExp][] = [
      ["pyproject.toml", /^\s*\[tool\.pytest\b/m],
      ["setup.cfg", /^\s*\[tool:pytest\]/m],
      ["tox.ini", /^\s*\[pytest\]/m],
    ]
    for (const [file, table] of tables) if (table.test((await text(path.join(dir, file))) ?? "")) return file
    if (await isFile(path.join(dir, "conftest.py"))) return "conftest.py"
    return undefined
  }

  function parseJson(text: string): unknown {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }

  async function text(file: string): Promise<string | undefined> {
    return (await isFile(file)) ? readFile(file, "utf8").catch(() => undefined) : undefined
  }

  async function isFile(file: string): Promise<boolean> {
    return (await stat(file).catch(() => undefined))?.isFile() === true
  }
}
