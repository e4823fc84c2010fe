import { readFileSync } from "node:fs"
import type { z } from "zod"
import { Scenario } from "./schema.ts"

/** A scenario that cannot be used; the message says which file, where in it, and what to fix. */
export class ScenarioError extends Error {
  override name = "ScenarioError"
  constructor(
    message: string,
    readonly source: string,
    readonly problems: { path: string; message: string }[] = [],
  ) {
    super(message)
  }
}

export function loadScenario(pathOrObject: string | Scenario | unknown): Scenario {
  const source = typeof pathOrObject === "string" ? pathOrObject : "<scenario object>"
  const raw = typeof pathOrObject === "string" ? readJson(pathOrObject) : pathOrObject
  const parsed = Scenario.safeParse(raw)
  if (parsed.success) return parsed.data
  const problems = parsed.error.issues.map((issue) => ({ path: jsonPath(issue.path), message: describe(issue) }))
  throw new ScenarioError(
    `invalid scenario ${source}:\n${problems.map((p) => `  at ${p.path}: ${p.message}`).join("\n")}\n(see packages/scripted-model/README.md for the format)`,
    source,
    problems,
  )
}

function readJson(path: string): unknown {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (e) {
    throw new ScenarioError(`cannot read scenario file ${path}: ${(e as Error).message}`, path)
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new ScenarioError(`scenario file ${path} is not valid JSON: ${(e as Error).message} (fix the syntax; comments and trailing commas are not allowed)`, path)
  }
}

/** `scripts[0].steps[2].args` style, the way one would point at it in the JSON file. */
function jsonPath(path: readonly PropertyKey[]): string {
  let out = "$"
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}: remove or fix the spelling`
  }
  return issue.message
}
