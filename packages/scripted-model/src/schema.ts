import { z } from "zod"
import { HttpError } from "./http-error.ts"
import { Chaos, Inject } from "./fault-schema.ts"

// Strict objects everywhere: a misspelt key ("untill") must be an error, not a silently ignored field.

const nonNegativeInt = z.number().int().min(0)

export const Usage = z.strictObject({
  promptTokens: nonNegativeInt.optional(),
  completionTokens: nonNegativeInt.optional(),
})
export type Usage = z.infer<typeof Usage>

export const Expect = z.strictObject({
  offered: z.array(z.string()).optional(),
  notOffered: z.array(z.string()).optional(),
  offeredExactly: z.array(z.string()).optional(),
  systemIncludes: z.array(z.string()).optional(),
  lastToolResultIncludes: z.array(z.string()).optional(),
  lastUserIncludes: z.array(z.string()).optional(),
  /** Each of these is in the text of some assistant message of the request (what the engine sends as the model's own past). */
  assistantIncludes: z.array(z.string()).optional(),
  /** None of these is in the last user message (what a request must not carry, e.g. a skill of another kind of task). */
  lastUserExcludes: z.array(z.string()).optional(),
  /** Exactly this many pictures (image_url parts) in the last user message; 0: none. */
  lastUserImages: nonNegativeInt.optional(),
})
export type Expect = z.infer<typeof Expect>

/**
 * When a step plays: only for a user message that holds all of these (each list entry a substring, the regex a
 * match). A step whose `when` fails for the user message it would answer is passed over, for good: a script
 * branches on what the user (or the program, in a user message) said, e.g. a confirmation or a request for changes.
 */
export const When = z.strictObject({
  lastUserIncludes: z.array(z.string()).optional(),
  lastUserExcludes: z.array(z.string()).optional(),
  lastUserRegex: z.string().min(1).optional(),
})
export type When = z.infer<typeof When>

export const ToolCall = z
  .strictObject({
    tool: z.string().min(1),
    args: z.record(z.string(), z.unknown()).optional(),
    /** The arguments string sent as is (invalid JSON, say): for tests of how a malformed call is handled. */
    rawArgs: z.string().optional(),
  })
  .refine((call) => call.args === undefined || call.rawArgs === undefined, { message: 'give either "args" or "rawArgs", not both', path: ["rawArgs"] })
export type ToolCall = z.infer<typeof ToolCall>

// One flat object instead of a z.union: union errors read "Invalid input", while the checks in
// checkStep below say exactly which key is missing or misplaced.
export const Step = z
  .strictObject({
    tool: z.string().min(1).optional(),
    args: z.record(z.string(), z.unknown()).optional(),
    rawArgs: z.string().optional(),
    tools: z.array(ToolCall).min(1).optional(),
    text: z.string().optional(),
    httpError: HttpError.optional(),
    delayMs: nonNegativeInt.optional(),
    until: z.string().min(1).optional(),
    untilRegex: z.string().min(1).optional(),
    allowUnoffered: z.boolean().optional(),
    usage: Usage.optional(),
    expect: Expect.optional(),
    when: When.optional(),
  })
  .superRefine(checkStep)
export type Step = z.infer<typeof Step>

export const Script = z.strictObject({
  name: z.string().optional(),
  agent: z.string().min(1),
  match: z.string().optional(),
  steps: z.array(Step).min(1),
})
export type Script = z.infer<typeof Script>

export const AgentRecognition = z.strictObject({
  systemMatch: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
})
export type AgentRecognition = z.infer<typeof AgentRecognition>

export const Scenario = z
  .strictObject({
    $schema: z.string().optional(),
    name: z.string().min(1),
    description: z.string().optional(),
    defaults: z
      .strictObject({
        delayMs: nonNegativeInt.optional(),
        usage: Usage.optional(),
        titleText: z.string().optional(),
        /** The model's price in USD per million tokens, given to the engine's provider config (none: the model is unpriced). */
        price: z.strictObject({ input: z.number().min(0), output: z.number().min(0) }).optional(),
      })
      .optional(),
    agents: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), AgentRecognition).optional(),
    scripts: z.array(Script),
    /** Seeded random provider faults (see faults.ts and the README's "Faults and chaos"). */
    chaos: Chaos.optional(),
    /** Faults for the first matching requests, in order. */
    inject: z.array(Inject).optional(),
  })
  .superRefine(checkScenario)
export type Scenario = z.infer<typeof Scenario>

type Ctx = z.RefinementCtx

function checkStep(step: z.infer<typeof Step>, ctx: Ctx): void {
  const kinds = (["tool", "tools", "text", "httpError"] as const).filter((k) => step[k] !== undefined)
  if (kinds.length !== 1) {
    ctx.addIssue({
      code: "custom",
      path: [],
      message:
        kinds.length === 0
          ? 'a step needs exactly one of "tool" (one call), "tools" (parallel calls), "text" (final answer) or "httpError" (the request fails)'
          : `a step has exactly one of "tool", "tools", "text" or "httpError", this one has ${kinds.map((k) => `"${k}"`).join(" and ")}: split it into separate steps`,
    })
  }
  if (step.args !== undefined && step.tool === undefined) {
    ctx.addIssue({ code: "custom", path: ["args"], message: '"args" belongs to a "tool" step (inside "tools", give each call its own "args")' })
  }
  if (step.rawArgs !== undefined && (step.tool === undefined || step.args !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["rawArgs"], message: step.tool === undefined ? '"rawArgs" belongs to a "tool" step' : 'give either "args" or "rawArgs", not both' })
  }
  if ((step.text !== undefined || step.httpError !== undefined) && (step.until !== undefined || step.untilRegex !== undefined)) {
    ctx.addIssue({ code: "custom", path: [step.until !== undefined ? "until" : "untilRegex"], message: '"until"/"untilRegex" repeat a tool call until its result contains the text; a "text" step has no tool result' })
  }
  if (step.until !== undefined && step.untilRegex !== undefined) {
    ctx.addIssue({ code: "custom", path: ["untilRegex"], message: 'give either "until" (plain text) or "untilRegex", not both' })
  }
  if (step.untilRegex !== undefined) checkRegex(step.untilRegex, ["untilRegex"], ctx)
  if (step.when?.lastUserRegex !== undefined) checkRegex(step.when.lastUserRegex, ["when", "lastUserRegex"], ctx)
}

function checkScenario(scenario: z.infer<typeof Scenario>, ctx: Ctx): void {
  for (const [name, recognition] of Object.entries(scenario.agents ?? {})) {
    const patterns = typeof recognition.systemMatch === "string" ? [recognition.systemMatch] : recognition.systemMatch
    patterns.forEach((p, i) => checkRegex(p, typeof recognition.systemMatch === "string" ? ["agents", name, "systemMatch"] : ["agents", name, "systemMatch", i], ctx))
  }
  scenario.scripts.forEach((script, s) => {
    if (script.match !== undefined) checkRegex(script.match, ["scripts", s, "match"], ctx)
    const groups = namedGroups(script.match)
    script.steps.forEach((step, i) => {
      for (const { name, path } of placeholders(step, ["scripts", s, "steps", i])) {
        if (!groups.has(name)) {
          ctx.addIssue({
            code: "custom",
            path,
            message: `placeholder {{${name}}} has no named group (?<${name}>...) in this script's "match"${groups.size ? ` (its groups: ${[...groups].join(", ")})` : ""}: add the group or fix the name`,
          })
        }
      }
    })
  })
}

function checkRegex(source: string, path: (string | number)[], ctx: Ctx): void {
  try {
    new RegExp(source)
  } catch (e) {
    ctx.addIssue({ code: "custom", path, message: `not a valid JavaScript regular expression (${(e as Error).message}); remember to double backslashes in JSON ("\\\\d")` })
  }
}

function namedGroups(source: string | undefined): Set<string> {
  const names = new Set<string>()
  for (const m of (source ?? "").matchAll(/\(\?<([A-Za-z_$][\w$]*)>/g)) names.add(m[1]!)
  return names
}

export const PLACEHOLDER = /\{\{\s*([A-Za-z_$][\w$]*)\s*\}\}/g

function* placeholders(value: unknown, path: (string | number)[]): Generator<{ name: string; path: (string | number)[] }> {
  if (typeof value === "string") {
    for (const m of value.matchAll(PLACEHOLDER)) yield { name: m[1]!, path }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* placeholders(value[i], [...path, i])
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) yield* placeholders(v, [...path, k])
  }
}
