import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { followProgress, progressLine } from "../../src/cli/progress"
import { Ui } from "../../src/cli/ui"
import { TerminalText } from "../../src/text/terminal-text"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { FIXTURE } from "../cli-view/helpers"

/**
 * The views follow events.jsonl through the store's one reader (JsonLines.Tail, via RunData.eventTail): the
 * headless progress lines and the dashboard's follower read only complete lines, each once, and start again
 * when the log is replaced. Real files, written the way the store writes them.
 */
const recorded = readFileSync(join(FIXTURE, ".air/local/state/events.jsonl"), "utf8").trim().split("\n")
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function run(lines: string[]): { root: string; file: string } {
  const root = mkdtempSync(join(tmpdir(), "air-tail-"))
  dirs.push(root)
  const file = RunData.eventsFile(root)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, lines.map((l) => `${l}\n`).join(""))
  return { root, file }
}

describe("following events.jsonl", () => {
  test("the tail returns complete lines once each, holds a line until its newline, and says when the log shrank", () => {
    const { root, file } = run(recorded.slice(0, 3))
    const tail = RunData.eventTail(root)
    expect((tail.read() as { lineNo: number }[]).map((l) => l.lineNo)).toEqual([1, 2, 3])
    expect(tail.read()).toEqual([])
    // A line being written: its first half, then the rest with its newline.
    const line = recorded[3]!
    appendFileSync(file, line.slice(0, 20))
    expect(tail.read()).toEqual([])
    expect(tail.hasPartialLine()).toBe(true)
    appendFileSync(file, `${line.slice(20)}\n\n`)
    expect(tail.read()).toEqual([{ text: line, lineNo: 4 }])
    expect(tail.hasPartialLine()).toBe(false)
    writeFileSync(file, `${recorded[0]}\n`)
    expect(tail.read()).toBe("reset")
  })

  test("headless progress shows what is appended after it starts, not the run's past, and not a half-written line", () => {
    const { root, file } = run(recorded.slice(0, 10))
    const shown: string[] = []
    const stop = followProgress(root, (line) => shown.push(line), "en")
    appendFileSync(file, recorded.slice(10, 20).map((l) => `${l}\n`).join("") + recorded[20]!.slice(0, 30))
    stop()
    const expected = recorded
      .slice(10, 20)
      .flatMap((line, i) => progressLine(root, line, i + 1, "en") ?? [])
      .map((text) => Ui.dim(`· ${TerminalText.truncate(text, 160)}`))
    expect(expected.length).toBeGreaterThan(0)
    expect(shown).toEqual(expected)
  })
})
