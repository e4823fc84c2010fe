import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { lintSource } from "@secretlint/core"
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend"
import { Glob } from "../glob/glob.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * The secret scan a task's change passes before it may merge: secretlint's recommended rules (AWS, GCP,
 * GitHub, Slack, npm, private keys, basic-auth URLs, …) over the lines the task added. Only added lines
 * count — a credential already on the integration branch is not the task's doing — and an allowlist file
 * (`.air/shared/rules/secrets-allow.txt`) lets a team mark test fixtures as not secret.
 */
export namespace SecretScan {
  export const ALLOW_PATH = AirPaths.SECRETS_ALLOW
  /** Files larger than this are not scanned (generated data, binaries that slipped through). */
  const MAX_BYTES = 2_000_000

  export type Finding = { file: string; line: number; rule: string; message: string }
  /** Lines of the allowlist: `path:<glob>` skips files, `rule:<id>` skips a rule, anything else is a literal the line may contain. */
  export type Allow = { paths: RegExp[]; rules: Set<string>; literals: string[] }

  export const NO_ALLOW: Allow = { paths: [], rules: new Set(), literals: [] }

  export function parseAllow(text: string): Allow {
    const allow: Allow = { paths: [], rules: new Set(), literals: [] }
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim()
      if (!line || line.startsWith("#")) continue
      if (line.startsWith("path:")) allow.paths.push(Glob.toRegExp(line.slice(5).trim()))
      else if (line.startsWith("rule:")) allow.rules.add(line.slice(5).trim())
      else allow.literals.push(line)
    }
    return allow
  }

  export async function loadAllow(root: string): Promise<Allow> {
    const text = await readFile(join(root, ALLOW_PATH), "utf8").catch(() => "")
    return parseAllow(text)
  }

  /** The lines each file gained, from a unified diff (`git diff -U0` or any context size). */
  export function addedLines(patch: string): Map<string, Set<number>> {
    const out = new Map<string, Set<number>>()
    let file: string | null = null
    let line = 0
    for (const text of patch.split("\n")) {
      if (text.startsWith("+++ ")) {
        const path = text.slice(4).trim()
        file = path === "/dev/null" ? null : path.replace(/^b\//, "")
        if (file && !out.has(file)) out.set(file, new Set())
        continue
      }
      if (text.startsWith("--- ") || text.startsWith("diff --git")) continue
      const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text)
      if (hunk) {
        line = Number(hunk[1])
        continue
      }
      if (!file) continue
      if (text.startsWith("+")) out.get(file)!.add(line++)
      else if (text.startsWith(" ")) line++
    }
    return out
  }

  /**
   * Scans what `patch` added in the working copy at `dir`. Returns the findings not covered by the
   * allowlist, ordered by file and line; the secret itself never appears in a message.
   */
  export async function scanPatch(dir: string, patch: string, allow: Allow = NO_ALLOW): Promise<Finding[]> {
    const findings: Finding[] = []
    for (const [file, lines] of addedLines(patch)) {
      if (lines.size === 0 || allow.paths.some((p) => p.test(file))) continue
      const content = await readFile(join(dir, file), "utf8").catch(() => null)
      if (content === null || content.length > MAX_BYTES || content.includes("\u0000")) continue
      const sourceLines = content.split("\n")
      for (const f of await scanText(file, content)) {
        if (!lines.has(f.line) || allow.rules.has(f.rule)) continue
        const text = sourceLines[f.line - 1] ?? ""
        if (allow.literals.some((literal) => text.includes(literal))) continue
        findings.push(f)
      }
    }
    return findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
  }

  export async function scanText(file: string, content: string): Promise<Finding[]> {
    const dot = file.lastIndexOf(".")
    const result = await lintSource({
      source: { content, filePath: file, ext: dot >= 0 ? file.slice(dot) : "", contentType: "text" },
      options: {
        config: { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended as never }] },
        maskSecrets: true,
        noPhysicFilePath: true,
      },
    })
    return result.messages.map((m) => ({ file, line: m.loc.start.line, rule: m.ruleId.replace(/^@secretlint\/secretlint-rule-/, ""), message: m.message }))
  }

  export function describe(findings: Finding[]): string {
    return findings.map((f) => `${f.file}:${f.line}: ${f.rule}: ${f.message}`).join("\n")
  }
}
