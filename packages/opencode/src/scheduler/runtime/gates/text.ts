import path from "node:path"
import type { Proc } from "../process.ts"
import type { Finding } from "./schema.ts"

/** Small helpers for the gates' words: logs and messages for people and the Debugger. */

export function formatRun(command: string, cwd: string, result: Proc.Result): string {
  const status = result.timedOut
    ? "timed out, stopped"
    : result.aborted
      ? "aborted, stopped"
      : result.spawnError
        ? `could not start: ${result.spawnError}`
        : result.code !== null
          ? `exit ${result.code}`
          : `killed by ${result.signal}`
  const out = result.output
  return `$ ${command}\n# cwd: ${cwd}\n${out}${out.endsWith("\n") || out === "" ? "" : "\n"}# ${status} after ${(result.ms / 1000).toFixed(1)} s\n\n`
}

export function stripPrefix(text: string, dir: string): string {
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep
  return text.split(prefix).join("")
}

export function lastLines(text: string, n: number): string {
  return text.trimEnd().split(/\r?\n/).slice(-n).join("\n")
}

export function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n")
}

export function listSome(items: string[], n: number): string {
  return items.length <= n ? items.join(", ") : `${items.slice(0, n).join(", ")} and ${items.length - n} more`
}

export function countBySeverity(findings: Finding[]): string {
  const counts = new Map<string, number>()
  for (const f of findings) counts.set(f.severity, (counts.get(f.severity) ?? 0) + 1)
  return [...counts].map(([severity, count]) => `${count} ${severity}`).join(", ")
}

export const INSTALL_HINTS: Record<string, string> = {
  cppcheck: "sudo apt-get install cppcheck (macOS: brew install cppcheck; Windows: choco install cppcheck)",
  cmake: "sudo apt-get install cmake (macOS: brew install cmake)",
  ctest: "sudo apt-get install cmake (ctest comes with cmake)",
  make: "sudo apt-get install build-essential",
  ninja: "sudo apt-get install ninja-build",
  "g++": "sudo apt-get install g++",
  gcc: "sudo apt-get install gcc",
  clang: "sudo apt-get install clang",
  "clang-tidy": "sudo apt-get install clang-tidy (macOS: brew install llvm)",
}
