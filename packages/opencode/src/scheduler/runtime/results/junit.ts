import { z } from "zod"

/**
 * Per-test results from JUnit XML: CTest's `--output-junit` file, or one a project's test runner writes.
 * A small reader for that one shape (testsuite → testcase with failure/error/skipped children), validated
 * with zod, rather than an XML library: the test gate needs names and outcomes, nothing else.
 */
export namespace JUnit {
  export const Outcome = z.enum(["passed", "failed", "skipped"])
  export type Outcome = z.infer<typeof Outcome>

  export const TestCase = z
    .object({
      /** `classname.name` when the class says more than the name (gtest); CTest's test name otherwise. */
      name: z.string().min(1),
      outcome: Outcome,
      /** A failing case's words: its failure/error element's message and text. */
      message: z.string().optional(),
    })
    .strict()
  export type TestCase = z.infer<typeof TestCase>

  /** Test name → outcome: what baseline.json keeps and the test gate compares. */
  export const Results = z.record(z.string().min(1), Outcome)
  export type Results = z.infer<typeof Results>

  /** The file name the test gate and the baseline ask CTest to write (in the build's excluded dir). */
  export const CTEST_FILE = "air-ctest-junit.xml"

  /**
   * The test cases of a JUnit document; undefined when the text is not one (no testsuite element), so a
   * caller can fall back to the tool's text output.
   */
  export function parse(xml: string): TestCase[] | undefined {
    // CDATA's text kept as escaped text (a failure's message is often in one), so no markup hides in it.
    const text = xml
      .replace(/<!--[\s\S]*?-->/g, "")
      .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, inner: string) => inner.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"))
    if (!/<testsuites?\b/.test(text)) return undefined
    const cases: TestCase[] = []
    const element = /<testcase\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/>|>([\s\S]*?)<\/testcase\s*>)/g
    for (const match of text.matchAll(element)) {
      const attrs = attributes(match[1] ?? "")
      const body = match[3] ?? ""
      const name = attrs.name ?? ""
      const qualified = attrs.classname && attrs.classname !== name ? `${attrs.classname}.${name}` : name
      const outcome = outcomeOf(attrs.status, body)
      const message = outcome === "failed" ? failureMessage(body) : undefined
      cases.push(TestCase.parse({ name: qualified, outcome, ...(message ? { message } : {}) }))
    }
    return cases
  }

  export function results(cases: readonly TestCase[]): Results {
    const out: Results = {}
    // A name seen twice (a repeated run) counts as failed if any run failed.
    for (const c of cases) out[c.name] = out[c.name] === "failed" ? "failed" : c.outcome
    return out
  }

  /** The first failure or error child's message attribute and text, decoded. */
  function failureMessage(body: string): string | undefined {
    const m = /<(failure|error)\b((?:[^>"']|"[^"]*"|'[^']*')*?)(?:\/>|>([\s\S]*?)<\/\1\s*>)/.exec(body)
    if (!m) return undefined
    const attr = attributes(m[2] ?? "").message ?? ""
    const inner = decode((m[3] ?? "").replace(/<[^>]*>/g, "")).trim()
    const message = inner === attr ? attr : [attr, inner].filter((part) => part !== "").join("\n")
    return message === "" ? undefined : message
  }

  export function failed(results: Results): string[] {
    return Object.keys(results).filter((name) => results[name] === "failed")
  }

  /**
   * CTest's own `status` first: `notrun` (the executable is missing) fails the run though JUnit calls it
   * skipped; `disabled` is skipped. Other runners: a failure or error child fails, a skipped child skips.
   */
  function outcomeOf(status: string | undefined, body: string): Outcome {
    if (status === "run") return "passed"
    if (status === "fail" || status === "notrun") return "failed"
    if (status === "disabled") return "skipped"
    if (/<(failure|error)\b/.test(body)) return "failed"
    if (/<skipped\b/.test(body)) return "skipped"
    return "passed"
  }

  function attributes(text: string): Record<string, string> {
    const out: Record<string, string> = {}
    for (const m of text.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) out[m[1]!] = decode(m[2] ?? m[3] ?? "")
    return out
  }

  function decode(text: string): string {
    return text.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, entity: string) => {
      const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" }
      if (entity[0] !== "#") return named[entity.toLowerCase()]!
      const code = entity[1] === "x" || entity[1] === "X" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10)
      return String.fromCodePoint(code)
    })
  }

  /** The command with `--output-junit <file>` when it runs ctest (and does not ask for it already). */
  export function withCtestJunit(command: string, file: string): string | undefined {
    if (!/^\s*(?:\S*\/)?ctest(\s|$)/.test(command) || /--output-junit\b/.test(command) || /[;&|]/.test(command)) return undefined
    return `${command} --output-junit '${file.replace(/'/g, `'\\''`)}'`
  }
}
