import type { JUnit } from "../../results/junit.ts"
import { silent, splitCommand, type TestRunner } from "./runner.ts"
import { TestRun } from "./schema.ts"

/**
 * cargo test: libtest's text read from the output (its JSON needs a nightly toolchain). A test is
 * `<target>::<path>`, the target being the source cargo names before each binary ("src/lib.rs", "tests/it.rs",
 * "doc"), so a name is the same in every worktree.
 */
export const cargoTestRunner = {
  framework: "cargo",
  matches(command) {
    const rest = splitCommand(command)?.rest
    return rest !== undefined && /^cargo\s+(?:\+\S+\s+)?test(\s|$)/.test(rest)
  },
  instrument(command) {
    return command
  },
  read(run) {
    const cases: { name: string; outcome: JUnit.Outcome; message?: string }[] = []
    const messages = new Map<string, string[]>()
    let target = ""
    let results = 0
    let seconds = 0
    let section: string | undefined
    for (const line of run.output.split(/\r?\n/)) {
      const running = /^\s*Running\s+(?:unittests\s+)?(\S+)/.exec(line)
      if (running) {
        target = running[1]!
        section = undefined
        continue
      }
      if (/^\s*Doc-tests\s+\S+/.test(line)) {
        target = "doc"
        section = undefined
        continue
      }
      const test = /^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)$/.exec(line)
      if (test) {
        const outcome = test[2] === "ok" ? "passed" : test[2] === "FAILED" ? "failed" : "skipped"
        cases.push({ name: `${target}::${test[1]}`, outcome })
        continue
      }
      const header = /^---- (.+?) stdout ----$/.exec(line)
      if (header) {
        section = `${target}::${header[1]}`
        messages.set(section, [])
        continue
      }
      const summary = /^test result: (?:ok|FAILED)\. .*finished in ([\d.]+)s/.exec(line)
      if (summary) {
        results++
        seconds += Number(summary[1])
        section = undefined
        continue
      }
      if (section !== undefined) {
        if (/^(failures|successes):$/.test(line)) section = undefined
        else messages.get(section)!.push(line)
      }
    }
    if (results === 0 && cases.length === 0)
      return silent(run) ? { ok: true, result: TestRun.of("cargo", []) } : { ok: false, why: "cargo test printed no libtest result (no `test result:` line)" }
    for (const c of cases) if (c.outcome === "failed") c.message = (messages.get(c.name) ?? []).join("\n")
    return { ok: true, result: TestRun.of("cargo", cases, seconds * 1000) }
  },
} as const satisfies TestRunner
