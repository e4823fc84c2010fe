import { z } from "zod"
import type { JUnit } from "../../results/junit.ts"
import { silent, splitCommand, type TestRunner } from "./runner.ts"
import { TestRun } from "./schema.ts"
import { goEnv } from "../analysers/go-vet.ts"
import { JsonLines } from "../../store/jsonl.ts"

/** The events `go test -json` prints, one a line (test2json); other lines (the compiler's errors) pass by. */
const Event = z
  .object({
    Action: z.string(),
    Package: z.string().optional(),
    Test: z.string().optional(),
    Elapsed: z.number().optional(),
    Output: z.string().optional(),
  })
  .passthrough()

/** go test: `-json` added, its events read from the output; a test is `<package>.<Test>`, a package that failed with no test failing (it did not build) is its own failing test. */
export const goTestRunner = {
  framework: "go",
  matches(command) {
    const rest = splitCommand(command)?.rest
    return rest !== undefined && /^go\s+test(\s|$)/.test(rest)
  },
  env: goEnv,
  instrument(command) {
    if (/\s-json\b/.test(command)) return command
    return command.replace(/\bgo\s+test\b/, "go test -json")
  },
  read(run) {
    const outcomes = new Map<string, JUnit.Outcome>()
    const outputs = new Map<string, string[]>()
    const stray: string[] = []
    let events = 0
    let seconds = 0
    for (const { text: line, record } of JsonLines.mixed(run.output)) {
      const parsed = record === undefined ? undefined : Event.safeParse(record)
      if (!parsed?.success) {
        if (line.trim() !== "") stray.push(line)
        continue
      }
      events++
      const e = parsed.data
      const pkg = e.Package ?? ""
      const key = e.Test ? `${pkg}.${e.Test}` : pkg
      if (e.Action === "output" && e.Output !== undefined) outputs.set(key, [...(outputs.get(key) ?? []), e.Output])
      if (e.Action === "pass" || e.Action === "fail" || e.Action === "skip") {
        if (e.Test) outcomes.set(key, e.Action === "pass" ? "passed" : e.Action === "fail" ? "failed" : "skipped")
        else {
          seconds += e.Elapsed ?? 0
          if (e.Action === "fail") outcomes.set(`package ${pkg}`, "failed")
        }
      }
    }
    if (events === 0) return silent(run) ? { ok: true, result: TestRun.of("go", []) } : { ok: false, why: "go test printed no test2json event (-json)" }
    const cases = [...outcomes].flatMap(([name, outcome]) => {
      // A package's failure is its failing tests' when it has any; its own only when none failed (a build error).
      if (name.startsWith("package ")) {
        const pkg = name.slice("package ".length)
        if ([...outcomes].some(([other, o]) => o === "failed" && other.startsWith(`${pkg}.`))) return []
        return [{ name, outcome, message: messageOf([...(outputs.get(pkg) ?? []), ...stray.map((l) => `${l}\n`)]) }]
      }
      return [{ name, outcome, message: outcome === "failed" ? messageOf(outputs.get(name) ?? []) : "" }]
    })
    return { ok: true, result: TestRun.of("go", cases, seconds * 1000) }
  },
} as const satisfies TestRunner

function messageOf(lines: readonly string[]): string {
  return lines
    .join("")
    .split("\n")
    .filter((l) => !/^\s*(=== (RUN|PAUSE|CONT)|--- (FAIL|PASS|SKIP):|FAIL$|PASS$|ok\s|FAIL\s)/.test(l))
    .join("\n")
}
