import type { RunData } from "../scheduler/runtime/store/run-data"
import { list, t, tOr, type Lang } from "../text/words"

/**
 * A gate failure as facts a person's words can be made of: which gate, how many findings in which
 * files, which tests failed. The raw tool output stays in the evidence (report.json and the logs);
 * the views word these facts from the catalogue, so a Chinese view never quotes an English sentence.
 */
export type GateFacts = {
  gate: string
  /** The task's own findings of the failed analyser (inherited ones only counted: the base had them). */
  findings: { count: number; errors: number; files: string[]; inherited: number } | null
  failingTests: string[] | null
  /** The gate run's evidence directory or report, relative when the view knows the root. */
  evidence: string | null
}

/** The gates whose failure is findings (by file, severity): cppcheck's ("analysis"), clang-tidy's, the backends'. */
const ANALYSER_GATES = new Set(["analysis", "clang-tidy", "mypy", "pylint", "tsc", "go-vet", "staticcheck", "clippy"])

/** The gate's name for people ("analysis" is cppcheck). */
export function gateLabel(lang: Lang, gate: string): string {
  return tOr(lang, `gate.${gate}`, gate)
}

/** The facts of a failed gate, from its gate run's report when there is one. */
export function gateFacts(gate: string, report: RunData.GateReportFile | null, evidence: string | null = null): GateFacts {
  const own = report && !report.passed && report.failedGate === gate ? report : null
  // An analyser gate's findings carry its tool's name; cppcheck's gate is "analysis" (and its findings once had no tool).
  const mine = (own?.findings ?? []).filter((f) => (f.tool ?? "cppcheck") === (gate === "analysis" ? "cppcheck" : gate))
  const blamed = mine.filter((f) => !f.inherited)
  const findings = blamed.length
    ? {
        count: blamed.length,
        errors: blamed.filter((f) => f.severity === "error").length,
        files: [...new Set(blamed.map((f) => f.file))],
        inherited: mine.length - blamed.length,
      }
    : null
  const testLine = own?.gates.find((g) => g.gate === "test" && !g.passed)?.summary
  const named = testLine ? /^failing tests: (.+?)(?: and \d+ more)?$/.exec(testLine) : null
  return {
    gate,
    findings: ANALYSER_GATES.has(gate) ? findings : null,
    failingTests: gate === "test" && named ? named[1]!.split(", ").filter(Boolean) : null,
    evidence,
  }
}

/** What failed, in the catalogue's words ("src/parser.cpp 中有 1 条发现，其中 1 个错误"). */
export function gateFailureText(lang: Lang, facts: GateFacts): string {
  const what = (() => {
    if (ANALYSER_GATES.has(facts.gate) && facts.findings) {
      const what = t(lang, "gatefail.analysis", { count: facts.findings.count, errors: facts.findings.errors, files: listSome(lang, facts.findings.files, 3) })
      return facts.findings.inherited > 0 ? t(lang, "gatefail.inherited", { what, count: facts.findings.inherited }) : what
    }
    if (facts.gate === "test" && facts.failingTests?.length) return t(lang, "gatefail.test.names", { names: listSome(lang, facts.failingTests, 5) })
    if (facts.gate === "analysis") return t(lang, "gatefail.analysis.failed")
    return tOr(lang, `gatefail.${facts.gate}`, t(lang, "gatefail.other"))
  })()
  return facts.evidence ? t(lang, "gatefail.where", { what, path: facts.evidence }) : what
}

function listSome(lang: Lang, items: string[], n: number): string {
  return items.length <= n ? list(lang, items) : list(lang, [...items.slice(0, n), `+${items.length - n}`])
}

/** A fault that stopped a gate run or a merge (its tag), in the catalogue's words. */
export function faultText(lang: Lang, tag: string): string {
  return tOr(lang, `fault.${tag}`, tag)
}

/** The gate run number in an evidence path (…/attempt-2/report.json → 2). */
export function gateRunOf(evidencePath: string): number | undefined {
  const m = /attempt-(\d+)/.exec(evidencePath)
  return m ? Number(m[1]) : undefined
}

/**
 * A task's last failure in the catalogue's words: a gate's from its facts; a review's with the
 * reviewer's own findings; a merge conflict with its files; a session's by what happened to it.
 */
export function failureText(lang: Lang, failure: { source: string; message: string; facts?: GateFacts | null }): string {
  if (failure.facts) return gateFailureText(lang, failure.facts)
  const first = failure.message.split(/\r?\n/).find((l) => l.trim())?.trim() ?? ""
  switch (failure.source) {
    case "review":
      return t(lang, "failure.review", { text: first })
    case "plan":
      return t(lang, "failure.plan", { text: first })
    case "merge":
      return t(lang, "failure.merge", { files: failure.message.replace(/^conflict in /, "") })
    case "worker":
    case "dispatch":
      return t(lang, `failure.${failure.source}`)
    default:
      return tOr(lang, `gatefail.${failure.source}`, t(lang, "failure.other", { source: failure.source }))
  }
}
