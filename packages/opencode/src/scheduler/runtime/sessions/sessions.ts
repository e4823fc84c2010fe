import type { PluginInput } from "@opencode-ai/plugin"
import type { Event, Part } from "@opencode-ai/sdk"
import { ConversationEstimate } from "./conversation-estimate"
import { ModelInput } from "./model-input"
import type { RetryClass, RetryStatus } from "./rate-limiter"
import { SessionCosts } from "./cost"

type Client = PluginInput["client"]

/**
 * Child sessions as the Scheduler sees them: created by code (never by the `task` tool), watched
 * through the engine's event bus, and ended by code. Every outcome — idle, error, abort, silence —
 * becomes a callback at once, so a child can never disappear without the Scheduler hearing of it.
 */
export namespace ChildSessions {
  export type Outcome =
    | { kind: "idle" }
    /**
     * `error`: the engine's payload as it came (session.error), for runtime/sessions/provider-error.ts;
     * `retryClass`: the session was given up on after the engine's retries of a retryable provider error ran past the bound.
     */
    | { kind: "error"; message: string; error?: unknown; retryClass?: RetryClass }
    | { kind: "aborted"; message: string }

  type Watched = {
    sessionID: string
    directory: string
    agent: string
    lastActivity: number
    busy: boolean
    /** The model has started a step since the last prompt (the engine's instance is up and working). */
    answering: boolean
    assistantMessages: Set<string>
    /** Tokens of each completed assistant message (a message may be reported completed more than once). */
    completed: Map<string, number>
    onOutcome: (o: Outcome) => void
    /** The run's rate limiter hears of each retry status and each completed call (see `watchRetries`). */
    retries?: RetryWatch
    /** The conversation's tokens estimated by content class, for calls the provider reports nothing for, and its ratio to the provider's figures. */
    estimate: ConversationEstimate
    /** `provider/model` of its last completed call, as the engine reported it: the trace's session span names it. */
    model?: string
  }

  export type RetryWatch = { onRetry(status: RetryStatus): void; onSuccess(): void }

  const watched = new Map<string, Watched>()

  export type Spec = { parentID?: string; agent: string; directory: string; title: string; prompt: string }

  /** Creates the session and starts watching it; the caller records it, then sends the first prompt. */
  export async function create(client: Client, spec: Omit<Spec, "prompt">, onOutcome: (o: Outcome) => void, now = Date.now()): Promise<string> {
    const created = await client.session.create({
      body: { parentID: spec.parentID, title: spec.title },
      query: { directory: spec.directory },
    })
    const id = created.data?.id
    if (!id) throw new Error(`could not create a ${spec.agent} session in ${spec.directory}: ${JSON.stringify(created.error ?? {})}`)
    watched.set(id, { sessionID: id, directory: spec.directory, agent: spec.agent, lastActivity: now, busy: false, answering: false, assistantMessages: new Set(), completed: new Map(), onOutcome, estimate: new ConversationEstimate() })
    return id
  }

  /**
   * Watches again a session the Scheduler created and let go when its turn ended (the Architect between
   * its proposal and the user's answer): the next prompt continues the same conversation.
   */
  export function adopt(spec: { sessionID: string; agent: string; directory: string }, onOutcome: (o: Outcome) => void, now = Date.now()): void {
    if (watched.has(spec.sessionID)) return
    watched.set(spec.sessionID, { ...spec, lastActivity: now, busy: false, answering: false, assistantMessages: new Set(), completed: new Map(), onOutcome, estimate: new ConversationEstimate() })
  }

  /** The engine's retries of the session's calls, and its completed calls, go to `watch` (the run's rate limiter). */
  export function watchRetries(sessionID: string, watch: RetryWatch): void {
    const w = watched.get(sessionID)
    if (w) w.retries = watch
  }

  /**
   * Ends a session whose provider error the engine would retry without end: it is aborted (its abort is
   * not reported) and its outcome is the error, with its class, so the Scheduler decides what follows.
   */
  export async function giveUp(client: Client, sessionID: string, outcome: Extract<Outcome, { kind: "error" }>): Promise<void> {
    const w = watched.get(sessionID)
    if (!w) return
    watched.delete(sessionID)
    await client.session.abort({ path: { id: sessionID }, query: { directory: w.directory } }).catch(() => undefined)
    w.onOutcome(outcome)
  }

  /** Forgets a session whose work is over (its outcome was handled). */
  export function release(sessionID: string): void {
    watched.delete(sessionID)
  }

  /**
   * Sends one more prompt to a session the Scheduler already owns (e.g. "you ended without a report"); `images`
   * go as file parts after the text (the caller sends them only to a model that takes images: ModelInput).
   */
  export async function prompt(
    client: Client,
    sessionID: string,
    text: string,
    now = Date.now(),
    images: readonly ModelInput.Image[] = [],
    traceparent?: string,
  ): Promise<void> {
    const w = watched.get(sessionID)
    if (!w) throw new Error(`session ${sessionID} is not one of the Scheduler's`)
    w.busy = true
    w.answering = false
    w.lastActivity = now
    const res = await client.session.promptAsync({
      path: { id: sessionID },
      query: { directory: w.directory },
      body: { agent: w.agent, parts: [{ type: "text", text }, ...ModelInput.parts(images)] },
      // The engine's spans of this prompt (its model calls, its tools) hang under the session's span: TraceSpans.traceparent.
      ...(traceparent ? { headers: { traceparent } } : {}),
    })
    if (res.error) throw new Error(`prompt to session ${sessionID} refused: ${JSON.stringify(res.error)}`)
  }

  export async function abort(client: Client, sessionID: string): Promise<void> {
    const w = watched.get(sessionID)
    watched.delete(sessionID)
    await client.session.abort({ path: { id: sessionID }, query: { directory: w?.directory } }).catch(() => undefined)
  }

  /** The text of the session's last assistant message (what the child said when it stopped). */
  export async function lastReply(client: Client, sessionID: string, directory?: string): Promise<string> {
    const res = await client.session.messages({ path: { id: sessionID }, query: { directory } })
    const messages = res.data ?? []
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!
      if (m.info.role !== "assistant") continue
      const text = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
      if (text) return text
    }
    return ""
  }

  export function isWatched(sessionID: string): boolean {
    return watched.has(sessionID)
  }

  /**
   * The session's model calls and tokens: the provider's figure per call, the estimate for a call it reported
   * none for (`estimated` of them), and the ratio of its figures to the estimate where both are known.
   */
  export function stats(sessionID: string): { requests: number; tokens: number; agent: string; estimated: number; ratio?: number; model?: string } | undefined {
    const w = watched.get(sessionID)
    if (!w) return undefined
    return { requests: w.completed.size, agent: w.agent, ...w.estimate.totals(), ...(w.model ? { model: w.model } : {}) }
  }

  /** What a part adds to the conversation: what the model generated (a reply's text, a tool call's input) and what it is given (a prompt, a tool's output). */
  function partContent(part: Part, assistant: boolean): { generated?: string; context?: string } {
    if (part.type === "text" || part.type === "reasoning") return assistant ? { generated: part.text } : { context: part.text }
    if (part.type !== "tool") return {}
    const state = part.state
    const result = state.status === "completed" ? state.output : state.status === "error" ? state.error : ""
    return { generated: `${part.tool} ${JSON.stringify(state.input ?? {})}`, context: result }
  }

  /** Every session the Scheduler watches now. */
  export function ids(): string[] {
    return [...watched.keys()]
  }

  /**
   * Sessions silent for longer than `ms` (the inactivity timer is code, not a model's judgement). Until
   * the model first answers, the engine may still be starting the instance of a new worktree — seconds
   * on an idle machine, far more on a loaded one — so that wait gets at least `startupMs`.
   */
  export function stalled(ms: number, now = Date.now(), startupMs = 120_000): string[] {
    return [...watched.values()]
      .filter((w) => w.busy && now - w.lastActivity > (w.answering ? ms : Math.max(ms, startupMs)))
      .map((w) => w.sessionID)
  }

  function sessionOf(event: Event): string | undefined {
    const p = (event as { properties?: Record<string, any> }).properties ?? {}
    return p.sessionID ?? p.info?.sessionID ?? p.part?.sessionID
  }

  /** Fed from every instance's `event` hook; ignores sessions the Scheduler does not own. */
  export function observe(event: Event, now = Date.now()): void {
    const id = sessionOf(event)
    const w = id ? watched.get(id) : undefined
    if (!w) return
    w.lastActivity = now
    // A part of an assistant message means a model step is under way; the prompt's own parts come earlier.
    if (event.type === "message.updated" && event.properties.info.role === "assistant") w.assistantMessages.add(event.properties.info.id)
    if (event.type === "message.part.updated" && w.assistantMessages.has(event.properties.part.messageID)) w.answering = true
    switch (event.type) {
      case "message.updated": {
        const info = event.properties.info
        if (info.role === "assistant" && info.time.completed) {
          if (!w.completed.has(info.id) && !info.error) w.retries?.onSuccess()
          const reported = info.tokens.input + info.tokens.output + info.tokens.reasoning
          w.completed.set(info.id, reported)
          if (info.modelID) w.model = info.providerID ? `${info.providerID}/${info.modelID}` : info.modelID
          w.estimate.ended(info.id, reported, Boolean(info.error))
          SessionCosts.note(info)
        }
        return
      }
      case "message.part.updated": {
        const part = event.properties.part
        w.estimate.part(part.messageID, part.id, partContent(part, w.assistantMessages.has(part.messageID)))
        return
      }
      case "session.status": {
        const status = event.properties.status
        if (status.type !== "retry") return
        // Waiting for the engine's next attempt is not silence: the inactivity clock starts again from it.
        w.lastActivity = Math.max(now, status.next)
        w.retries?.onRetry({ attempt: status.attempt, message: status.message, next: status.next })
        return
      }
      case "session.idle":
        if (!w.busy) return
        w.busy = false
        w.onOutcome({ kind: "idle" })
        return
      case "session.error": {
        const err = event.properties.error
        const message = err ? `${err.name}: ${JSON.stringify((err as { data?: unknown }).data ?? {})}` : "unknown error"
        w.busy = false
        w.onOutcome(err?.name === "MessageAbortedError" ? { kind: "aborted", message } : { kind: "error", message, error: err })
        return
      }
    }
  }
}
