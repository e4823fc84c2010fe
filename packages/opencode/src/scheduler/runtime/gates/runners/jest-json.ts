import path from "node:path"
import { z } from "zod"
import type { JUnit } from "../../results/junit.ts"
import { TestRun } from "./schema.ts"

/**
 * The JSON report jest writes with `--json` and vitest's `json` reporter copies: per file, per assertion. Only
 * the fields read are checked; the rest passes.
 */
export namespace JestJson {
  const Assertion = z
    .object({
      title: z.string(),
      ancestorTitles: z.array(z.string()).default([]),
      status: z.string(),
      failureMessages: z.array(z.string()).nullish(),
    })
    .passthrough()
  const FileResult = z
    .object({
      name: z.string(),
      status: z.string().optional(),
      message: z.string().optional(),
      startTime: z.number().optional(),
      endTime: z.number().optional(),
      assertionResults: z.array(Assertion).default([]),
    })
    .passthrough()
  export const Report = z.object({ testResults: z.array(FileResult), startTime: z.number().optional() }).passthrough()

  export function read(framework: "vitest" | "jest", text: string, cwd: string): TestRun.Read {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      return { ok: false, why: `${framework}'s JSON report does not parse (${e instanceof Error ? e.message : String(e)})` }
    }
    const parsed = Report.safeParse(json)
    if (!parsed.success) return { ok: false, why: `${framework}'s JSON report has no testResults (${parsed.error.issues[0]?.message ?? "invalid"})` }
    const cases: { name: string; outcome: JUnit.Outcome; message?: string }[] = []
    let end = 0
    for (const file of parsed.data.testResults) {
      const rel = path.isAbsolute(file.name) ? path.relative(cwd, file.name).split(path.sep).join("/") : file.name
      end = Math.max(end, file.endTime ?? 0)
      for (const a of file.assertionResults) {
        const name = [rel, ...a.ancestorTitles, a.title].join(" > ")
        cases.push({ name, outcome: outcomeOf(a.status), message: (a.failureMessages ?? []).join("\n") })
      }
      // A file that failed with no test in it (it did not import, a hook threw): the file is the failing test.
      if (file.status === "failed" && !file.assertionResults.some((a) => outcomeOf(a.status) === "failed"))
        cases.push({ name: rel, outcome: "failed", message: file.message ?? "" })
    }
    const start = parsed.data.startTime
    return { ok: true, result: TestRun.of(framework, cases, start !== undefined && end >= start ? end - start : undefined) }
  }

  function outcomeOf(status: string): JUnit.Outcome {
    if (status === "passed") return "passed"
    if (status === "failed") return "failed"
    return "skipped"
  }
}
