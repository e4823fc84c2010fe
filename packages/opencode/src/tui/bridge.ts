import { z } from "zod"
import { t, type Lang } from "../text/words"

/**
 * The TUI plugin runs in the TUI's thread, the Scheduler in the server's: they share no memory. The
 * one channel between them that costs no model request on the pinned engine is the server's event bus:
 * the TUI plugin publishes a `tui.command.execute` event (POST /tui/publish) whose command is
 * `aircoding:<json>`, and the server plugin's `event` hook — which sees every bus event of its
 * instance — hands it to the Scheduler. The TUI ignores command names it has no command for.
 * Measured on 1.18.33: see src/tui/README.md.
 */
export namespace TuiBridge {
  export const PREFIX = "aircoding:"

  export const Request = z.discriminatedUnion("verb", [
    z.object({ verb: z.literal("confirm"), notes: z.string().optional() }),
    /** At a proposal: the plan goes back to the Architect with the user's words; later: a requirement change. */
    z.object({ verb: z.literal("change"), text: z.string().min(1) }),
    z.object({ verb: z.literal("answer"), questionId: z.string().min(1), answer: z.string().min(1) }),
    z.object({ verb: z.literal("pause") }),
    z.object({ verb: z.literal("resume") }),
  ])
  export type Request = z.infer<typeof Request>

  export function encode(request: Request): string {
    return PREFIX + JSON.stringify(Request.parse(request))
  }

  /** The request a bus command carries, or undefined when the command is not ours (or malformed). */
  export function decode(command: unknown): Request | undefined {
    if (typeof command !== "string" || !command.startsWith(PREFIX)) return undefined
    try {
      const parsed = Request.safeParse(JSON.parse(command.slice(PREFIX.length)))
      return parsed.success ? parsed.data : undefined
    } catch {
      return undefined
    }
  }

  /** What the server side needs of the Scheduler: the Orchestrator's user-facing verbs. */
  export type Scheduler = {
    confirm(notes?: string): Promise<string>
    change(text: string): Promise<string>
    answer(questionId: string, answer: string): Promise<string>
    pause(): Promise<string>
    resumeRun(): Promise<string>
    /** The user acted in the TUI: Main's queued news about it is stale, and Main is told what the user did, in order. */
    heardFromTui?(request: Request): void
  }

  export async function carryOut(scheduler: Scheduler, request: Request): Promise<string> {
    switch (request.verb) {
      case "confirm":
        return scheduler.confirm(request.notes)
      case "change":
        return scheduler.change(request.text)
      case "answer":
        return scheduler.answer(request.questionId, request.answer)
      case "pause":
        return scheduler.pause()
      case "resume":
        return scheduler.resumeRun()
    }
  }

  /** A refusal reads "Cannot …", "Nothing to …", "… refused …" or "Error: …": the toast says it is one. */
  export function isRefusal(reply: string): boolean {
    return /^(Cannot|Nothing|Error)\b|refused/i.test(reply)
  }

  /** Event hook body for the server plugin: carries out our requests; a refusal comes back as a toast. */
  export async function onBusEvent(
    event: { type: string; properties?: unknown },
    scheduler: () => Scheduler,
    lang: () => Lang,
    toast: (message: string, variant: "success" | "error") => Promise<unknown>,
  ): Promise<void> {
    if (event.type !== "tui.command.execute") return
    const request = decode((event.properties as { command?: unknown } | undefined)?.command)
    if (!request) return
    let reply: string
    try {
      reply = await carryOut(scheduler(), request)
    } catch (err) {
      reply = `Error: ${err instanceof Error ? err.message : String(err)}`
    }
    // Success shows in the sidebar within a second; only a refusal needs words of its own.
    if (isRefusal(reply)) await toast(t(lang(), "tui.reply.refused", { reason: reply }), "error").catch(() => undefined)
    else scheduler().heardFromTui?.(request)
  }
}
