import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { statusCommand } from "../../src/cli/status"
import type { RunView } from "../../src/read/view"
import { makeProgramRun } from "../support/program-evidence"
import { capture, copyFixture } from "./helpers"

// `aircoding status` names the evidence files of each ui and service task (issue 37 item 4): the screenshots, the
// window tree, the pcap, the summary; a code task's line has none.

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length) cleanups.pop()!()
})
function programRun(): string {
  const copy = copyFixture()
  cleanups.push(copy.cleanup)
  makeProgramRun(copy.root)
  return copy.root
}

describe("aircoding status names a program's evidence files", () => {
  test("the text: under each ui or service task, its gate run's directory and each file by what it is", async () => {
    const root = programRun()
    const r = await capture(() => statusCommand([root]))
    expect(r.code, r.stderr).toBe(0)
    const dir1 = join(root, ".air/local/evidence/T-1/attempt-1")
    const dir3 = join(root, ".air/local/evidence/T-3/attempt-1")
    const block = (from: string) => r.stdout.slice(r.stdout.indexOf(from)).split("\n").slice(0, 7).join("\n")
    expect(block(`  T-1: evidence of gate run 1 in ${dir1}`)).toBe(
      [
        `  T-1: evidence of gate run 1 in ${dir1}`,
        "    screenshot (after): capture/screenshot.png",
        "    screenshot before (the base): capture/before/screenshot.png",
        "    whole display: capture/screen.png",
        "    window tree: capture/windows.json",
        "    program output: capture/program.log",
        "    before/after comparison: capture/compare.json",
      ].join("\n"),
    )
    expect(block(`  T-3: evidence of gate run 1 in ${dir3}`).split("\n").slice(0, 5)).toEqual([
      `  T-3: evidence of gate run 1 in ${dir3}`,
      "    network capture (pcap): probe/capture.pcap",
      "    network summary: probe/summary.txt",
      "    probe output: probe/probe.log",
      "    service output: probe/service.log",
    ])
    expect(r.stdout).not.toContain("T-2: evidence")
  })

  test("in Chinese too", async () => {
    const r = await capture(() => statusCommand([programRun(), "--lang", "zh-CN"]))
    expect(r.stdout).toContain("T-1：第 1 次门禁的证据，位于 ")
    expect(r.stdout).toContain("    窗口树: capture/windows.json")
    expect(r.stdout).toContain("    网络抓包（pcap）: probe/capture.pcap")
  })

  test("--json: each ui or service task's `evidence` holds its files with absolute paths; a code task has none", async () => {
    const root = programRun()
    const r = await capture(() => statusCommand([root, "--json"]))
    const view = JSON.parse(r.stdout) as RunView.Status
    const task = (id: string) => view.tasks.find((t) => t.id === id)!
    const dir = join(root, ".air/local/evidence/T-1/attempt-1")
    expect(task("T-1").evidence).toMatchObject({ gateRun: 1, dir })
    expect(task("T-1").evidence!.files.map((f) => f.kind)).toEqual(["screenshot", "before", "screen", "windows", "programLog", "compare"])
    expect(task("T-1").evidence!.files[0]).toEqual({ kind: "screenshot", path: join(dir, "capture/screenshot.png"), rel: "capture/screenshot.png" })
    expect(task("T-3").evidence!.files.map((f) => f.kind)).toEqual(["pcap", "summary", "probeLog", "serviceLog"])
    expect(task("T-2").evidence).toBeUndefined()
  })
})
