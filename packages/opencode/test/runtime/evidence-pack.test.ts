import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { newTaskRuntime } from "../../src/scheduler/core/state"
import { ContextPack } from "../../src/scheduler/runtime/sessions/context-pack"
import { EvidencePack } from "../../src/scheduler/runtime/sessions/evidence-pack"
import { ModelInput } from "../../src/scheduler/runtime/sessions/model-input"
import { task } from "../scheduler/fixtures"
import { plantServiceProbe, plantUiCapture, solidPng, SUMMARY_TXT, WINDOW_TITLE } from "../support/program-evidence"

// What the Reviewer and the final review are told of a program's evidence (issue 37 item 4), read from a gate
// run's files on disk as the gates leave them.

const root = mkdtempSync(join(tmpdir(), "air-evidence-pack-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const ui = task("T-1", { kind: "ui", title: "Paint the window green", ui: { command: ".air-build/app", checks: { title: WINDOW_TITLE, pixels: [{ x: 160, y: 120, rgb: "#2e8b57" }] } } })
const service = task("T-4", { kind: "service", title: "Answer PONG", service: { service: { command: "build/server" }, ports: [7000], probe: { command: "nc", expect: { contains: "PONG" } } } })
const code = task("T-2", { title: "Bump the version" })
plantUiCapture(root, "T-1", 2)
plantServiceProbe(root, "T-4", 1)
plantUiCapture(root, "T-2", 1)

describe("the Reviewer's prompt carries a program's evidence", () => {
  test("a ui task: checks, the gate's verdict, the window tree, the changed share and the files as text; after and before as pictures when the model takes them", () => {
    const pack = EvidencePack.forReview(root, ui, 2, true)
    const text = pack.lines.join("\n")
    expect(text).toContain("Program evidence (ui task; gathered by the gates in code, gate run 2):")
    expect(text).toContain(`- Checks judged in code: the title is "${WINDOW_TITLE}"; the window is not one colour; the pixel at (160, 120) is #2e8b57 (±16)`)
    expect(text).toContain("- The ui-capture gate's verdict: passed: window shown and checked: 1 window(s)")
    // Only mapped windows: the hidden one is not in the tree shown.
    expect(text).toContain(`- Window tree (mapped top-level windows): "${WINDOW_TITLE}" 320x240 at (0, 0)\n`)
    expect(text).toContain("- changed from the base 0123456789ab: 99.0% of the pixels")
    expect(text).toContain("screenshot .air/local/evidence/T-1/attempt-2/capture/screenshot.png, before .air/local/evidence/T-1/attempt-2/capture/before/screenshot.png")
    expect(text).toContain("windows .air/local/evidence/T-1/attempt-2/capture/windows.json")
    expect(text).toContain("attached to this message as images, in this order: 1. T-1 after")
    expect(pack.images.map((i) => i.path)).toEqual([join(root, ".air/local/evidence/T-1/attempt-2/capture/screenshot.png"), join(root, ".air/local/evidence/T-1/attempt-2/capture/before/screenshot.png")])
    expect(pack.images[1]!.label).toContain("T-1 before: the base 0123456789ab")
    // Placed in the prompt between the task and the instructions.
    const prompt = ContextPack.reviewer(root, ui, "/wt/T-1", newTaskRuntime("T-1", 0), pack.lines)
    expect(prompt.indexOf("Program evidence")).toBeGreaterThan(prompt.indexOf("Done when:"))
    expect(prompt.indexOf("Program evidence")).toBeLessThan(prompt.indexOf("Call air_diff"))
  })

  test("a model that takes no images gets no picture and is told to judge from the text", () => {
    const pack = EvidencePack.forReview(root, ui, 2, false)
    expect(pack.images).toEqual([])
    const text = pack.lines.join("\n")
    expect(text).toContain("Your model does not take images")
    expect(text).toContain("99.0% of the pixels")
    expect(text).not.toContain("attached to this message")
  })

  test("no before picture: the note says why, and only the after picture goes", () => {
    const dir = mkdtempSync(join(tmpdir(), "air-evidence-pack-nobefore-"))
    try {
      plantUiCapture(dir, "T-1", 1, { before: false })
      const pack = EvidencePack.forReview(dir, ui, 1, true)
      expect(pack.lines.join("\n")).toContain("- no before picture: the base does not build")
      expect(pack.images.map((i) => i.label)).toEqual([expect.stringContaining("T-1 after")])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test("a service task: the probe's verdict, the network summary and the probe's run; no picture", () => {
    const pack = EvidencePack.forReview(root, service, 1, true)
    const text = pack.lines.join("\n")
    expect(text).toContain("Program evidence (service task")
    expect(text).toContain("- The service-probe gate's verdict: passed: probe passed: the probe's output holds 'PONG'")
    expect(text).toContain("- Network summary (what went over the service's loopback):")
    for (const line of SUMMARY_TXT) expect(text).toContain(`    ${line}`)
    expect(text).toContain("    $ nc -N 127.0.0.1 7000")
    expect(text).toContain("pcap .air/local/evidence/T-4/attempt-1/probe/capture.pcap, summary .air/local/evidence/T-4/attempt-1/probe/summary.txt")
    expect(pack.images).toEqual([])
  })

  test("a code task's review gets none of it, even with capture files beside it", () => {
    expect(EvidencePack.forReview(root, code, 1, true)).toEqual({ lines: [], images: [] })
    expect(ContextPack.reviewer(root, code, "/wt/T-2")).not.toContain("Program evidence")
  })

  test("a ui task whose gate run left nothing says so", () => {
    const pack = EvidencePack.forReview(root, ui, 7, true)
    expect(pack.lines.join("\n")).toContain("- none on disk under .air/local/evidence/T-1/attempt-7")
    expect(pack.images).toEqual([])
  })
})

describe("the final review sees every capture of the run", () => {
  test("each ui and service task's evidence in a few lines; code tasks not listed; pictures bounded", () => {
    const more = [3, 5, 6].map((n) => task(`T-${n}`, { kind: "ui", title: `Screen ${n}`, ui: { command: "app" } }))
    for (const t of more) plantUiCapture(root, t.id, 1)
    const runs: Record<string, number> = { "T-1": 2, "T-4": 1 }
    const pack = EvidencePack.forFinalReview(root, [ui, code, service, ...more], (id) => runs[id] ?? 1, true)
    const text = pack.lines.join("\n")
    expect(text).toContain("Captures of the run")
    expect(text).toContain("- T-1 (ui): Paint the window green")
    expect(text).toContain(`  windows: "${WINDOW_TITLE}" 320x240 at (0, 0); changed from the base 0123456789ab: 99.0% of the pixels`)
    expect(text).toContain("  files: screenshot .air/local/evidence/T-1/attempt-2/capture/screenshot.png")
    expect(text).toContain("- T-4 (service): Answer PONG")
    expect(text).toContain("    connections: 1")
    expect(text).toContain("      #1 127.0.0.1:40000 → 127.0.0.1:7000: closed (FIN), 10 packets")
    expect(text).not.toContain("T-2")
    // Four ui tasks: eight pictures, of which the after ones go first and FINAL_IMAGES in all.
    expect(pack.images).toHaveLength(EvidencePack.FINAL_IMAGES)
    expect(pack.images.map((i) => i.label.split(":")[0])).toEqual(["T-1 after", "T-3 after", "T-5 after", "T-6 after"])
    expect(text).toContain("(4 more are the files named above)")
    const prompt = ContextPack.milestone(1, "the requirement", [ui, code, service], { final: true, captures: pack.lines })
    expect(prompt.indexOf("Captures of the run")).toBeGreaterThan(prompt.indexOf("ADRs:"))
  })

  test("without images the section still names every file; a run with no ui or service task has no section", () => {
    const pack = EvidencePack.forFinalReview(root, [ui, service], (id) => (id === "T-1" ? 2 : 1), false)
    expect(pack.images).toEqual([])
    expect(pack.lines.join("\n")).toContain("not attached: your model does not take images")
    expect(EvidencePack.forFinalReview(root, [code], () => 1, true)).toEqual({ lines: [], images: [] })
  })
})

describe("whether a model takes images, from the engine's answers", () => {
  const model = (capabilities: object) => ({ id: "m", capabilities })
  const providers = (models: Record<string, object>) => ({ providers: [{ id: "p", models }], default: { p: "plain" } })
  const both = providers({ vision: model({ attachment: false, input: { image: true } }), files: model({ attachment: true, input: { image: false } }), plain: model({ attachment: false, input: { image: false } }) })

  test("the agent's own model first, then the config's model, then the provider's default", () => {
    expect(ModelInput.decide({ model: "p/plain", agent: { reviewer: { model: "p/vision" } } }, both, "reviewer")).toBe(true)
    expect(ModelInput.decide({ model: "p/plain", agent: { reviewer: { model: "p/vision" } } }, both, "architect")).toBe(false)
    expect(ModelInput.decide({ model: "p/files" }, both, "reviewer")).toBe(true)
    expect(ModelInput.decide({}, both, "reviewer")).toBe(false)
  })

  test("the config's own words count too (attachment, modalities.input); an unknown model or an unreadable answer is no", () => {
    expect(ModelInput.decide({ model: "p/raw" }, providers({ raw: { modalities: { input: ["text", "image"] } } }), "reviewer")).toBe(true)
    expect(ModelInput.decide({ model: "p/raw" }, providers({ raw: { attachment: true } }), "reviewer")).toBe(true)
    expect(ModelInput.decide({ model: "p/gone" }, both, "reviewer")).toBe(false)
    expect(ModelInput.decide({ model: "p/vision" }, { providers: "no" }, "reviewer")).toBe(false)
  })

  test("pictures go as data URLs; a missing or oversized one is left out", () => {
    const png = join(root, "one.png")
    solidPng(png, [1, 2, 3])
    const big = join(root, "big.png")
    writeFileSync(big, Buffer.alloc(ModelInput.MAX_IMAGE_BYTES + 1))
    const parts = ModelInput.parts([{ path: png, label: "after" }, { path: join(root, "none.png"), label: "gone" }, { path: big, label: "big" }])
    expect(parts).toEqual([{ type: "file", mime: "image/png", filename: "after", url: `data:image/png;base64,${readFileSync(png).toString("base64")}` }])
  })
})
