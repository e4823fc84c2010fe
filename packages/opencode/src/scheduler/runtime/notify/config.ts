import { z } from "zod"
import { Strict } from "../../core/strict"

/**
 * `notify` in .air/shared/config.json: where a run tells people what needs them (a question waits, the run
 * ended, a deploy rolled back, a budget is spent, a long rate-limit pause). Refused at start like every key of
 * the file: an unknown kind names the key and the nearest known kind.
 */
export namespace NotifyConfig {
  /** `webhook` posts generic JSON; the others the message format of the team chat of that name. */
  export const KINDS = ["webhook", "slack", "feishu", "dingtalk", "wecom", "desktop"] as const
  export type Kind = (typeof KINDS)[number]
  export const EVENTS = ["question", "done", "failed", "rolledBack", "budget", "rateLimit"] as const
  export type EventKind = (typeof EVENTS)[number]

  const Kind = z.string().superRefine((kind, ctx) => {
    if ((KINDS as readonly string[]).includes(kind)) return
    const near = Strict.nearest(kind, KINDS)
    ctx.addIssue({ code: "custom", message: `unknown kind "${kind}"${near ? `; did you mean ${near}?` : ""} (kinds: ${KINDS.join(", ")})` })
  }).transform((kind) => kind as Kind)

  export const Channel = z
    .object({
      kind: Kind,
      /** The webhook's URL (its secret included, as the chat gives it): never written to a log, an event or a view. */
      url: z.string().optional(),
      /** The events this channel gets; all of them when absent. */
      events: z.array(z.enum(EVENTS)).optional(),
    })
    .strict()
    .superRefine((c, ctx) => {
      if (c.kind === "desktop") {
        if (c.url !== undefined) ctx.addIssue({ code: "custom", path: ["url"], message: "the desktop kind takes no url (it runs notify-send)" })
        return
      }
      if (c.url === undefined) return void ctx.addIssue({ code: "custom", path: ["url"], message: `missing: a ${c.kind} channel needs the webhook's url` })
      if (!/^https?:\/\/[^\s/]+/.test(c.url)) ctx.addIssue({ code: "custom", path: ["url"], message: "expected an http:// or https:// URL" })
    })
  export type Channel = z.infer<typeof Channel>

  export const Schema = z
    .object({
      channels: z.array(Channel).default([]),
      /** How long one attempt may take before it is abandoned. */
      timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
      /** Attempts per notification and channel (with backoff between them) before it is dropped and counted. */
      attempts: z.number().int().min(1).max(10).default(3),
    })
    .strict()
  export type Config = z.infer<typeof Schema>

  /** A URL as it may be shown: its origin only (the secret of a chat webhook is in its path or query). */
  export function shown(url: string): string {
    try {
      return `${new URL(url).origin}/…`
    } catch {
      return "(the configured URL)"
    }
  }
}
