import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"
import { ImportGraph } from "../support/import-graph"

/**
 * The TUI plugin runs inside the engine's TUI process: what it imports is loaded there. Its graph must
 * stay light — the catalogue, the read model and the pure core, never the Scheduler's runtime (engine,
 * processes, git, the orchestrator). Type-only imports cost nothing at run time and are not followed.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src")

/** Every file of src/ the module loads (now or by a later `import()`), and every package it names. */
function graph(entry: string): { files: string[]; packages: string[] } {
  const g = ImportGraph.walk(SRC, entry, { dynamic: true })
  return { files: [...g.files.keys()].sort(), packages: [...g.packages].sort() }
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
