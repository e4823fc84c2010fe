import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { PluginInput } from "@opencode-ai/plugin"
import { z } from "zod"
import { CompactionCheck } from "../../core/compaction-check"
import type { EventInput } from "../ports"
import { TokenEstimate } from "./token-estimate"
import { writeFileAtomicSync } from "../store/atomic"

type Client = PluginInput["client"]

/**
 * The runtime edge of checked compaction (issue 38, item 4). The pinned engine compacts a session itself
 * (1.18.33, read from its bundle): when a step's tokens reach the model's context less its output, it adds a
 * user message with a `compaction` part, has the "compaction" agent write a summary (an assistant message
 * with `summary: true`), calls the `experimental.compaction.autocontinue` hook (awaited) and publishes
 * `session.compacted`; from then on it sends the model only the summary and what followed. A plugin can
 * add to the summary's prompt (`experimental.session.compacting`) and rewrite what each request sends
 * (`experimental.chat.messages.transform`), but not redo the engine's own summary. So the check runs after
 * the fact, in the awaited hook, before the session's next request: the summary against the conversation it
 * replaced; a failing summary is redone once by the compaction agent in a scratch child session with a
 * prompt naming what was lost; the summary that stands (the retry's, with what it still lost appended from
 * the record) is sent after the engine's summary on every later request of the session.
 */
export namespace CompactionGuard {
  /** What the engine's compaction prompt is given besides its own words: the classes the check holds it to. */
  export const KEEP_CONTEXT =
    "Keep, written exactly as in the conversation, every file path, ADR id (ADR-<n>), task id (T-<n>), TODO/FIXME/HACK marker and invariant number the conversation mentions: the summary is checked for them in code."

  const Part = z
    .object({
      type: z.string(),
      text: z.string().optional(),
      ignored: z.boolean().optional(),
      tool: z.string().optional(),
      state: z.object({ status: z.string(), input: z.unknown().optional(), output: z.string().optional(), error: z.string().optional() }).partial().optional(),
    })
    .passthrough()
  const Message = z.object({
    info: z.object({ id: z.string(), role: z.enum(["user", "assistant"]), parentID: z.string().optional(), summary: z.boolean().optional(), finish: z.string().optional() }).passthrough(),
    parts: z.array(Part),
  })
  export type Message = z.infer<typeof Message>

  /** A message as the conversation's record: what was said, each tool call with its input and output. */
  function render(m: Message): string {
    const lines: string[] = []
    for (const p of m.parts) {
      if (p.type === "text" && p.text && !p.ignored) lines.push(p.text)
      if (p.type === "tool") {
        lines.push(`${p.tool ?? "tool"}(${JSON.stringify(p.state?.input ?? {})})`)
        if (p.state?.output) lines.push(p.state.output)
        if (p.state?.error) lines.push(p.state.error)
      }
    }
    return lines.join("\n")
  }

  export type Compaction = { summaryId: string; original: string; summary: string }

  /**
   * The latest finished compaction of a conversation: its summary and the conversation before it (earlier
   * summaries and what the guard appended included: they are the record too), or undefined when there is none.
   */
  export function latest(messages: unknown[]): Compaction | undefined {
    const parsed = messages.flatMap((m) => {
      const r = Message.safeParse(m)
      return r.success ? [r.data] : []
    })
    const summaryAt = parsed.findLastIndex((m) => m.info.role === "assistant" && m.info.summary === true && m.info.finish !== undefined)
    if (summaryAt < 0) return undefined
    const summary = parsed[summaryAt]!
    const askedAt = parsed.findIndex((m) => m.info.id === summary.info.parentID)
    const before = parsed.slice(0, askedAt >= 0 ? askedAt : summaryAt)
    return { summaryId: summary.info.id, original: before.map(render).filter(Boolean).join("\n\n"), summary: render(summary) }
  }

  /** The prompt of the retried summary: what was lost, then the conversation. */
  export function retryPrompt(original: string, lost: Partial<CompactionCheck.Items>): string {
    return [
      "Summarise the conversation below for the assistant that goes on with it: what was asked, what was decided and done, what is left to do.",
      CompactionCheck.retryContext(lost),
      "The conversation:",
      original,
    ].join("\n\n")
  }

  export type Outcome = { event: Omit<Extract<EventInput, { type: "context.compacted" }>, "sessionId" | "role">; appended?: string }

  /**
   * The check and its consequences, given a way to have the summary redone: the event to record and the text
   * to send after the engine's summary (none when the engine's summary kept what mattered).
   */
  export async function decide(c: Compaction, redo: (prompt: string) => Promise<string>): Promise<Outcome> {
    const first = CompactionCheck.compare(c.original, c.summary)
    if (CompactionCheck.verdict(first, 1) === "kept")
      return { event: { type: "context.compacted", outcome: "kept", attempts: 1, counts: CompactionCheck.counts(first), appended: [] } }
    let retried = ""
    try {
      retried = await redo(retryPrompt(c.original, CompactionCheck.lostItems(first)))
    } catch {
      // A retry that could not run lost everything: the record fills in below.
    }
    const second = CompactionCheck.compare(c.original, retried)
    const counts = CompactionCheck.counts(second)
    const header = "The summary of the conversation so far, as checked (it replaces the one above where they differ):"
    if (CompactionCheck.verdict(second, 2) === "kept")
      return { event: { type: "context.compacted", outcome: "retried", attempts: 2, counts, appended: [] }, appended: `${header}\n\n${retried}` }
    const lost = CompactionCheck.lostItems(second)
    const items = CompactionCheck.CLASSES.flatMap((k) => lost[k] ?? [])
    const body = [retried.trim() || c.summary, CompactionCheck.repairText(lost)].join("\n\n")
    return { event: { type: "context.compacted", outcome: "repaired", attempts: 2, counts, appended: items }, appended: `${header}\n\n${body}` }
  }

  const Addition = z.object({ summaryId: z.string().min(1), text: z.string() })
  type Addition = z.infer<typeof Addition>
  /** What each session's checked summary adds after the engine's (by session; for the summary message it names). */
  const additions = new Map<string, Addition | null>()
  /** Where the additions are kept beside the run (an engine restarted mid-conversation sends them still): set by the plugin. */
  let keptIn: string | undefined

  export function keepIn(dir: string): void {
    keptIn = dir
  }

  function fileOf(sessionID: string): string | undefined {
    return keptIn && /^[A-Za-z0-9_-]+$/.test(sessionID) ? join(keptIn, `${sessionID}.json`) : undefined
  }

  function remember(sessionID: string, add: Addition | null): void {
    additions.set(sessionID, add)
    const file = fileOf(sessionID)
    if (!file || !add) return
    try {
      writeFileAtomicSync(file, JSON.stringify(add))
    } catch {
      // Kept in memory for this engine process all the same.
    }
  }

  /** The session's addition: in memory, else from its file (once per process). */
  function additionOf(sessionID: string): Addition | null {
    const known = additions.get(sessionID)
    if (known !== undefined) return known
    const file = fileOf(sessionID)
    let found: Addition | null = null
    if (file) {
      try {
        const r = Addition.safeParse(JSON.parse(readFileSync(file, "utf8")))
        found = r.success ? r.data : null
      } catch {
        found = null
      }
    }
    additions.set(sessionID, found)
    return found
  }
  /** Summaries already checked (the hook and the bus event both announce an automatic compaction). */
  const checked = new Set<string>()

  /** The longest the retried summary may take before the record repairs the engine's summary instead. */
  const RETRY_MS = 180_000

  /** The child session the compaction agent redoes a summary in: its reply's text. */
  async function redoIn(client: Client, sessionID: string, directory: string, prompt: string): Promise<string> {
    const created = await client.session.create({ body: { parentID: sessionID, title: "compaction retry" }, query: { directory } })
    const id = created.data?.id
    if (!id) throw new Error(`the engine did not create the retry's session: ${JSON.stringify(created.error)}`)
    // The session being compacted waits on this hook: a provider that never answers must not hold it for ever.
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void client.session.abort({ path: { id }, query: { directory } }).catch(() => undefined)
        reject(new Error(`the retried summary took longer than ${RETRY_MS / 1000} s`))
      }, RETRY_MS)
    })
    const reply = await Promise.race([client.session.prompt({ path: { id }, query: { directory }, body: { agent: "compaction", parts: [{ type: "text", text: prompt }] } }), late]).finally(() => clearTimeout(timer))
    if (!reply.data) throw new Error(`the retry's prompt failed: ${JSON.stringify(reply.error)}`)
    return (reply.data.parts as { type: string; text?: string }[])
      .filter((p) => p.type === "text")
      .map((p) => p.text ?? "")
      .join("\n")
  }

  /**
   * A session of `role` was compacted: checks its latest summary once, redoes it when it fails, and records
   * the event. Never throws: a guard that fails leaves the engine's summary as it was.
   */
  export async function afterCompaction(
    client: Client,
    sessionID: string,
    role: CompactionCheck.Role,
    directory: string,
    record: (event: EventInput) => Promise<unknown>,
  ): Promise<void> {
    try {
      const res = await client.session.messages({ path: { id: sessionID }, query: { directory } })
      const c = latest((res.data ?? []) as unknown[])
      if (!c || checked.has(c.summaryId)) return
      checked.add(c.summaryId)
      const outcome = await decide(c, (prompt) => redoIn(client, sessionID, directory, prompt))
      // A newer summary that kept what mattered replaces an older addition: that one names a summary no longer sent.
      if (outcome.appended) remember(sessionID, { summaryId: c.summaryId, text: outcome.appended })
      await record({ ...outcome.event, sessionId: sessionID, role })
    } catch {
      // The conversation goes on with the engine's summary; the run's log simply has no check of it.
    }
  }

  /** What the engine would send of a conversation now: its latest summary (and what was appended to it) and what followed. */
  export function sinceLastSummary(messages: unknown[]): string {
    const parsed = messages.flatMap((m) => {
      const r = Message.safeParse(m)
      return r.success ? [r.data] : []
    })
    const at = parsed.findLastIndex((m) => m.info.role === "assistant" && m.info.summary === true)
    const kept = at >= 0 ? parsed.slice(at) : parsed
    const summary = at >= 0 ? parsed[at]!.info : undefined
    const add = typeof summary?.sessionID === "string" ? additionOf(summary.sessionID) : null
    const added = summary && add?.summaryId === summary.id ? add.text : ""
    return [...kept.map(render), added].filter(Boolean).join("\n\n")
  }

  /** The number of messages a session had when it was last compacted here: no new turn, no new compaction. */
  const askedAt = new Map<string, number>()

  /** Each checked session's model limits, from the last request's model (chat.params). */
  const limits = new Map<string, { providerID: string; modelID: string; context: number; output: number }>()

  export function noteModel(sessionID: string, model: { providerID: string; id: string; limit: { context: number; output: number } }): void {
    limits.set(sessionID, { providerID: model.providerID, modelID: model.id, context: model.limit.context, output: model.limit.output })
  }

  /**
   * A session of ours went idle: when the estimate by content class says its conversation will not fit the
   * next request (CompactionCheck.compactBefore), the engine is asked to compact it now; the check follows
   * on session.compacted. Never throws.
   */
  export async function compactIfNeeded(client: Client, sessionID: string, directory: string): Promise<boolean> {
    const model = limits.get(sessionID)
    if (!model) return false
    try {
      const res = await client.session.messages({ path: { id: sessionID }, query: { directory } })
      const messages = (res.data ?? []) as unknown[]
      // A summary that alone does not fit is not made smaller by summarising it again.
      if (messages.length < (askedAt.get(sessionID) ?? 0) + 4) return false
      const tokens = TokenEstimate.tokens(sinceLastSummary(messages))
      if (!CompactionCheck.compactBefore(tokens, model)) return false
      askedAt.set(sessionID, messages.length)
      const done = await client.session.summarize({ path: { id: sessionID }, query: { directory }, body: { providerID: model.providerID, modelID: model.modelID } })
      return done.data === true
    } catch {
      return false
    }
  }

  type Sent = { info: { id: string; sessionID: string }; parts: unknown[] }

  /** Every later request of a session sends its checked summary right after the engine's (experimental.chat.messages.transform). */
  export function transform(messages: Sent[]): void {
    for (const m of messages) {
      const add = additionOf(m.info.sessionID)
      if (!add || add.summaryId !== m.info.id) continue
      m.parts.push({ id: `prt_aircoding_${add.summaryId}`, sessionID: m.info.sessionID, messageID: m.info.id, type: "text", text: add.text, synthetic: true })
    }
  }
}
