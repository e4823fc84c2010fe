import type { Conversation } from "./conversation.ts"
import { unmetExpectations } from "./expect.ts"
import type { Scenario, Script, Step } from "./schema.ts"
import { fillPlaceholders } from "./template.ts"

// Pure routing: the same request always gets the same answer, whatever came before on the server,
// so parallel sessions and client retries stay deterministic.

const ROLE_LINE = /AirCoding role: ([a-z][a-z0-9_-]*)/
const TITLE_SYSTEM = /title generator/i
const ASKS_FOR_TITLE = /\b(generate|write|create|give)\b[^\n]*\btitle\b/i

export const TITLE_AGENT = "title"
export const UNKNOWN_AGENT = "unknown"

/**
 * Overrides first (in declaration order), then OpenCode's title generator, then the role line. A
 * tool-less request that merely asks for a title counts as a title request only without a role
 * line, so an AirCoding agent asked to "write a title" is still itself.
 */
export function recognizeAgent(conv: Conversation, agents: Scenario["agents"] = {}): string {
  for (const [name, { systemMatch }] of Object.entries(agents)) {
    const patterns = typeof systemMatch === "string" ? [systemMatch] : systemMatch
    if (patterns.some((p) => new RegExp(p).test(conv.system))) return name
  }
  if (TITLE_SYSTEM.test(conv.system)) return TITLE_AGENT
  const role = ROLE_LINE.exec(conv.system)?.[1]
  if (role) return role
  if (isTitleRequest(conv)) return TITLE_AGENT
  return UNKNOWN_AGENT
}

export function isTitleRequest(conv: Conversation): boolean {
  return TITLE_SYSTEM.test(conv.system) || (conv.offered.length === 0 && ASKS_FOR_TITLE.test(`${conv.system}\n${conv.firstUser}`))
}

interface ScriptChoice {
  index: number
  script: Script
  groups: Record<string, string | undefined>
}

export function selectScript(scripts: Script[], agent: string, firstUser: string): ScriptChoice | undefined {
  for (let index = 0; index < scripts.length; index++) {
    const script = scripts[index]!
    if (script.agent !== agent) continue
    if (script.match === undefined) return { index, script, groups: {} }
    const m = new RegExp(script.match).exec(firstUser)
    if (m) return { index, script, groups: { ...m.groups } }
  }
  return undefined
}

/**
 * Each assistant message already in the conversation consumed one step, except that a step with
 * `until`/`untilRegex` stays current while the tool results that answered it lack the text. A step whose
 * `when` fails for the user message a turn answered (or, at the end, the request's last one) is passed over.
 */
export function deriveStepIndex(steps: Step[], conv: Conversation, groups: Record<string, string | undefined> = {}): number {
  let index = 0
  const skip = (lastUser: string) => {
    while (steps[index] && !whenHolds(steps[index]!, lastUser, groups)) index++
  }
  for (const turn of conv.assistantTurns) {
    // A turn the fault model made up answered no step.
    if (turn.chaos) continue
    skip(turn.lastUser)
    const step = steps[index]
    if (step && !untilSatisfied(step, turn.toolResults, groups)) continue
    index++
  }
  skip(conv.lastUser)
  return index
}

function whenHolds(step: Step, lastUser: string, groups: Record<string, string | undefined>): boolean {
  const w = step.when
  if (!w) return true
  if ((w.lastUserIncludes ?? []).some((t) => !lastUser.includes(fillPlaceholders(t, groups)))) return false
  if ((w.lastUserExcludes ?? []).some((t) => lastUser.includes(fillPlaceholders(t, groups)))) return false
  return w.lastUserRegex === undefined || new RegExp(fillPlaceholders(w.lastUserRegex, groups)).test(lastUser)
}

function untilSatisfied(step: Step, toolResults: string, groups: Record<string, string | undefined>): boolean {
  if (step.until !== undefined) return toolResults.includes(fillPlaceholders(step.until, groups))
  if (step.untilRegex !== undefined) return new RegExp(fillPlaceholders(step.untilRegex, groups)).test(toolResults)
  return true
}

export type Decision =
  | { kind: "play"; agent: string; script: ScriptChoice; stepIndex: number; step: Step }
  | { kind: "auto-title"; agent: string }
  | { kind: "fail"; agent: string; script?: ScriptChoice; stepIndex?: number; reason: string }

export function decide(scenario: Scenario, conv: Conversation): Decision {
  const agent = recognizeAgent(conv, scenario.agents)
  const script = selectScript(scenario.scripts, agent, conv.firstUser)
  if (!script) {
    if (agent === TITLE_AGENT) return { kind: "auto-title", agent }
    const forAgent = scenario.scripts.filter((s) => s.agent === agent).length
    const reason =
      agent === UNKNOWN_AGENT
        ? 'no agent recognised: the system prompt has no "AirCoding role: <name>" line and matches no "agents" override (script agent "unknown" to accept such requests)'
        : forAgent === 0
          ? `no script for agent "${agent}" (add a script with "agent": "${agent}")`
          : `none of the ${forAgent} script(s) for agent "${agent}" has a "match" that matches the first user message`
    return { kind: "fail", agent, reason }
  }
  const { steps } = script.script
  const stepIndex = deriveStepIndex(steps, conv, script.groups)
  const raw = steps[stepIndex]
  if (!raw) {
    return {
      kind: "fail",
      agent,
      script,
      stepIndex,
      reason: `steps exhausted: the script has ${steps.length} step(s) and the conversation already has ${conv.assistantTurns.length} assistant message(s) (add a step, or end the script with a "text" step)`,
    }
  }
  const step = fillPlaceholders(raw, script.groups)
  const problems = unmetExpectations(step, conv)
  if (problems.length) return { kind: "fail", agent, script, stepIndex, reason: problems.join("; ") }
  return { kind: "play", agent, script, stepIndex, step }
}

/** How the log and error messages name a script: its name when it has one, else its index. */
export function scriptLabel(choice: ScriptChoice): string | number {
  return choice.script.name ?? choice.index
}
