import { readdir, stat } from "node:fs/promises"
import path from "node:path"
import type { Areas } from "./areas.ts"
import { DetectRunners } from "./detect-runners.ts"

/**
 * The areas of a repository that holds more than the top's build: a directory one or two levels down that is a
 * project of its own (a pyproject.toml or pytest's files, a package.json, a go.mod, a Cargo.toml) becomes an area
 * with that language's commands and analysers, beside the area of what the top builds (detect.ts).
 */
export namespace DetectAreas {
  /** Directories that hold what was built, fetched or vendored, never a part of the project's own. */
  const SKIP = new Set(["node_modules", "target", "build", "dist", "out", "vendor", "third_party", "venv", "__pycache__"])

  /** The analysers of each runner's language: the area's files are read by these. */
  const ANALYSERS: Record<DetectRunners.Found["framework"] | "python" | "node", string[]> = {
    pytest: ["mypy", "pylint"],
    python: ["mypy", "pylint"],
    vitest: ["tsc"],
    jest: ["tsc"],
    node: ["tsc"],
    go: ["go-vet", "staticcheck"],
    cargo: ["clippy"],
  }

  export interface Found {
    /** The directory, relative to the top, `/` between directories. */
    root: string
    area: Omit<Areas.Area, "name" | "root">
    /** A name for it: the directory's, or its language's at the top. */
    name: string
  }

  /** The areas the top's own test runners make (pyproject.toml beside CMakeLists.txt…), each rooted at the top. */
  export async function at(dir: string, root: string): Promise<Found[]> {
    const runners = await DetectRunners.run(path.join(dir, root))
    const found: Found[] = runners.found.map((r) => ({
      root,
      name: r.framework,
      area: { build: r.build ? [r.build] : [], test: [r.test], analysers: ANALYSERS[r.framework], detected: `${root === "." ? "" : `${root}/`}${r.because}` },
    }))
    const frameworks = new Set(runners.found.map((r) => r.framework))
    const has = (file: string) => isFile(path.join(dir, root, file))
    // A Python package without pytest's own configuration still has tests pytest finds (tests/test_*.py).
    if (!frameworks.has("pytest") && ((await has("pyproject.toml")) || (await has("setup.py")))) {
      const marker = (await has("pyproject.toml")) ? "pyproject.toml" : "setup.py"
      found.unshift({ root, name: "python", area: { build: [DetectRunners.COMPILE_PYTHON], test: ["python3 -m pytest -q"], analysers: ANALYSERS.python, detected: `${root === "." ? "" : `${root}/`}${marker}` } })
    }
    if (!frameworks.has("vitest") && !frameworks.has("jest") && (await has("package.json")))
      found.push({ root, name: "node", area: { build: [], test: [], analysers: ANALYSERS.node, detected: `${root === "." ? "" : `${root}/`}package.json` } })
    return found
  }

  /** The areas below the top: each directory one or two levels down that is a project of its own (the first level wins). */
  export async function below(dir: string): Promise<Found[]> {
    const found: Found[] = []
    for (const first of await subdirs(dir, "")) {
      const here = await at(dir, first)
      if (here.length > 0) {
        found.push(...here)
        continue
      }
      for (const second of await subdirs(dir, first)) found.push(...(await at(dir, second)))
    }
    return found
  }

  /** Names the found areas: the directory's last part, its runner's when two share it; `taken` are names already used. */
  export function named(found: readonly Found[], taken: readonly string[]): Areas.Area[] {
    const used = new Set(taken)
    return found.map((f) => {
      const base = (f.root === "." ? f.name : path.posix.basename(f.root)).toLowerCase().replace(/[^a-z0-9_.-]/g, "-").replace(/^[^a-z0-9]+/, "") || f.name
      let name = used.has(base) ? `${base}-${f.name}` : base
      for (let n = 2; used.has(name); n++) name = `${base}-${f.name}-${n}`
      used.add(name)
      return { name, root: f.root, ...f.area }
    })
  }

  async function subdirs(dir: string, under: string): Promise<string[]> {
    const entries = await readdir(path.join(dir, under), { withFileTypes: true }).catch(() => [])
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith(".") && !SKIP.has(e.name) && /^[A-Za-z0-9_+@-][A-Za-z0-9_.+@-]*$/.test(e.name))
      .map((e) => (under ? `${under}/${e.name}` : e.name))
      .sort()
  }

  async function isFile(file: string): Promise<boolean> {
    return (await stat(file).catch(() => undefined))?.isFile() === true
  }
}
