import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * The layers around the read model (issue 42 item 2): the runtime carries out the run and writes its files,
 * `src/read/` words them for the views, and `src/text/` (the catalogue of words and the pure renderings of
 * the state) sits below both. An arrow from the runtime up into src/read, or from src/text into either, is
 * refused here, static imports, re-exports and `import()` alike.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : [],
  )

/** The files of `root` each relative import of `file` names (static, re-export, side effect, `import("…")`), relative to `root`. */
function importsOf(root: string, file: string): string[] {
  const text = readFileSync(file, "utf8")
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^"'`;]*?from\s+["'](\.[^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s+["'](\.[^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["'`](\.[^"'`]+)["'`]\s*\)/g),
  ].map((m) => m[1]!)
  return specs.map((s) => relative(root, resolve(dirname(file), s)).replace(/\.tsx?$/, ""))
}

/** Every import from a file under `from/` into a folder `into` matches, as "from-file → target" (paths relative to `root`). */
function crossings(root: string, from: string, into: RegExp): string[] {
  const dir = join(root, from)
  if (!existsSync(dir)) return []
  return walk(dir).flatMap((f) =>
    importsOf(root, f)
      .filter((target) => into.test(target))
      .map((target) => `${relative(root, f).replace(/\.tsx?$/, "")} → ${target}`),
  )
}

const RUNTIME = "scheduler/runtime"
const INTO_READ = /^read\//
const INTO_RUNTIME_OR_READ = /^(read|scheduler\/runtime)\//

/**
 * What src/read imports of the runtime besides the store (scheduler/runtime/store/: the log folded, the gate
 * reports, progress files and the records, read through store/jsonl.ts), each a reader or schema of one file the
 * runtime writes, with why. Never its moving parts (the orchestrator, the interpreter, gates, sessions' supervisor).
 */
const READ_REACHES_RUNTIME: Record<string, string> = {
  "read/run-liveness → scheduler/runtime/jobs/file": "jobs.json's schema: whose job holders still run",
  "read/status-read → scheduler/runtime/jobs/file": "jobs.json: the job budget in use, for the status",
  "read/status-read → scheduler/runtime/sessions/usage": "requests.jsonl's reader: model requests by agent",
  "read/status-read → scheduler/runtime/verify/program-evidence": "a ui or service task's evidence files, by their schemas",
  "read/view → scheduler/runtime/verify/program-evidence": "the evidence's types for the status view",
  "read/view → scheduler/runtime/report/run-report": "the run's summary type the view shows (RunReport.Summary)",
  "read/view-render → scheduler/runtime/report/run-report": "the run's summary type the terminal page takes (RunReport.Summary)",
}
const INTO_RUNTIME_BUT_STORE = /^scheduler\/runtime\/(?!store\/)/

/** A throwaway src/ with one planted file, to show the rule fails on what it says it refuses. */
function planted(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "air-layers-"))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe("the runtime sits below the read model, src/text below both", () => {
  test("no file under scheduler/runtime imports src/read", () => {
    // air_status's tool (src/tool/coordinator.ts) words the status from the orchestrator's state, not the orchestrator.
    expect(crossings(SRC, RUNTIME, INTO_READ)).toEqual([])
  })

  test("src/text imports nothing of the runtime nor of the read model", () => {
    expect(crossings(SRC, "text", INTO_RUNTIME_OR_READ)).toEqual([])
    // ...and only the core of the Scheduler besides its own files.
    const outside = walk(join(SRC, "text")).flatMap((f) =>
      importsOf(SRC, f).filter((t) => !t.startsWith("text/") && !t.startsWith("scheduler/core/")),
    )
    expect(outside).toEqual([])
  })

  test("src/read reaches the runtime only through the store, but for today's listed file readers", () => {
    const found = [...new Set(crossings(SRC, "read", INTO_RUNTIME_BUT_STORE))]
    expect(found.filter((c) => !(c in READ_REACHES_RUNTIME))).toEqual([])
    expect(Object.keys(READ_REACHES_RUNTIME).filter((c) => !found.includes(c))).toEqual([])
  })

  test("a planted violation fails each rule: a static import, a re-export, an import() and a type import; the store allowed, the orchestrator not", () => {
    const root = planted({
      "read/words.ts": "export const t = 1\n",
      "read/run-report.ts": "export const r = 1\n",
      "scheduler/runtime/store/store.ts": "export const s = 1\n",
      "scheduler/runtime/notify/news.ts": 'import { t } from "../../../read/words"\n',
      "scheduler/runtime/gates/progress.ts": 'export { t } from "../../../read/words.ts"\n',
      "scheduler/runtime/interpreter.ts": 'const late = async () => (await import("../../read/run-report")).r\n',
      "scheduler/runtime/sessions/proposal.ts": 'import type { t } from "../../../read/words"\n',
      "scheduler/runtime/sessions/fine.ts": 'import { s } from "../store/store"\n',
      "text/labels.ts": 'import { s } from "../scheduler/runtime/store/store"\nconst w = () => import("../read/words")\n',
      "read/status-read.ts": 'import { s } from "../scheduler/runtime/store/store"\nimport { o } from "../scheduler/runtime/orchestrator"\n',
      "scheduler/runtime/orchestrator.ts": "export const o = 1\n",
    })
    try {
      expect(crossings(root, RUNTIME, INTO_READ).sort()).toEqual([
        "scheduler/runtime/gates/progress → read/words",
        "scheduler/runtime/interpreter → read/run-report",
        "scheduler/runtime/notify/news → read/words",
        "scheduler/runtime/sessions/proposal → read/words",
      ])
      expect(crossings(root, "text", INTO_RUNTIME_OR_READ).sort()).toEqual([
        "text/labels → read/words",
        "text/labels → scheduler/runtime/store/store",
      ])
      expect(crossings(root, "read", INTO_RUNTIME_BUT_STORE)).toEqual(["read/status-read → scheduler/runtime/orchestrator"])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
