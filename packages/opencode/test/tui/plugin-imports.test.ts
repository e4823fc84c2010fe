import { existsSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * The TUI plugin runs inside the engine's TUI process: what it imports is loaded there. Its graph must
 * stay light — the catalogue, the read model and the pure core, never the Scheduler's runtime (engine,
 * processes, git, the orchestrator). Type-only imports cost nothing at run time and are not followed.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src")

function runtimeImports(file: string): string[] {
  const text = readFileSync(file, "utf8")
  const specs: string[] = []
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']/gm)) if (!m[1]) specs.push(m[2]!)
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) specs.push(m[1]!)
  return specs
}

/** Every file of src/ the module loads, and every package it names. */
function graph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const queue = [entry]
  while (queue.length) {
    const file = queue.pop()!
    if (files.has(file)) continue
    files.add(file)
    for (const spec of runtimeImports(file)) {
      if (!spec.startsWith(".")) {
        packages.add(spec)
        continue
      }
      const base = resolve(dirname(file), spec)
      const found = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((c) => /\.tsx?$/.test(c) && existsSync(c))
      if (!found) throw new Error(`${relative(SRC, file)} imports ${spec}, which was not found`)
      queue.push(found)
    }
  }
  return { files: [...files].map((f) => relative(SRC, f)).sort(), packages: [...packages].sort() }
}

describe("the TUI plugin's import graph", () => {
  test("the catalogue of words loads nothing but node:fs and the names of .air/ (a core file with no imports)", () => {
    const { files, packages } = graph(join(SRC, "text/words.ts"))
    expect(files).toEqual(["scheduler/core/air-paths.ts", "text/words.ts"])
    expect(packages).toEqual(["node:fs"])
  })

  test("the plugin loads the catalogue, the read model and the core, and of the runtime only its file readers", () => {
    const { files, packages } = graph(join(SRC, "tui/plugin.tsx"))
    expect(files).toContain("text/words.ts")
    expect(files).toContain("tui/view.ts")
    // usage.ts reads the request log; jsonl.ts reads it, serial.ts orders its appends (no I/O of its own); jobs/file.ts
    // reads the job budget's jobs.json; run-holder.ts reads the store's lock and holder.json, process-identity.ts
    // /proc (whether the run's process still runs); run-data.ts reads the event log and the gate reports, gate-progress.ts
    // the progress files; the verify files are the program evidence's reader (program-evidence.ts names a ui or service
    // task's files), its schemas and the pcap reader. Nothing else of the runtime.
    expect(files.filter((f) => f.startsWith("scheduler/runtime/"))).toEqual([
      "scheduler/runtime/jobs/file.ts",
      "scheduler/runtime/sessions/usage.ts",
      "scheduler/runtime/store/gate-progress.ts",
      "scheduler/runtime/store/jsonl.ts",
      "scheduler/runtime/store/process-identity.ts",
      "scheduler/runtime/store/run-data.ts",
      "scheduler/runtime/store/run-holder.ts",
      "scheduler/runtime/store/serial.ts",
      "scheduler/runtime/verify/capture-summary.ts",
      "scheduler/runtime/verify/pcap.ts",
      "scheduler/runtime/verify/program-evidence.ts",
      "scheduler/runtime/verify/service-probe-spec.ts",
    ])
    expect(files.filter((f) => !/^(scheduler\/core|text|read|tui|scheduler\/runtime)\//.test(f))).toEqual([])
    expect(packages.filter((p) => !p.startsWith("node:"))).toEqual(["solid-js", "zod"])
  })
})
