import type { PluginInput } from "@opencode-ai/plugin"
import type { AssistantMessage } from "@opencode-ai/sdk"
import { z } from "zod"

/**
 * What each watched session's requests cost, as the engine priced them: the pinned engine sets an assistant
 * message's `cost` (USD) from its model's `cost` in the catalogue or the provider config (per million tokens).
 * A model with no price there is charged 0 by the engine; a request with tokens and no cost is therefore
 * "unpriced" — its cost is unknown, and it is never counted as free.
 */
export namespace SessionCosts {
  export type Cost = { usd: number; unpriced: number }

  /**
   * Per session, per completed assistant message: its cost and its tokens (a message may be reported more than
   * once). Kept after a session is let go: the Architect's session is watched again after the user's answer,
   * and its totals must go on from where they were.
   */
  const messages = new Map<string, Map<string, { usd: number; tokens: number }>>()

  /** Called for each completed assistant message of a session the Scheduler watches. */
  export function note(info: AssistantMessage): void {
    let of = messages.get(info.sessionID)
    if (!of) messages.set(info.sessionID, (of = new Map()))
    of.set(info.id, { usd: info.cost ?? 0, tokens: info.tokens.input + info.tokens.output + info.tokens.reasoning })
  }

  export function of(sessionID: string): Cost | undefined {
    const of = messages.get(sessionID)
    if (!of) return undefined
    let usd = 0
    let unpriced = 0
    for (const m of of.values()) {
      usd += m.usd
      if (m.usd === 0 && m.tokens > 0) unpriced++
    }
    return { usd, unpriced }
  }

}

type Client = PluginInput["client"]

/** The parts of the engine's answers the price is read from (a boundary: checked, never trusted). */
const Providers = z.object({
  providers: z.array(z.object({ id: z.string(), models: z.record(z.string(), z.object({ cost: z.object({ input: z.number(), output: z.number() }).partial().optional() }).passthrough()) }).passthrough()),
})
const ConfigModel = z.object({ model: z.string().optional() }).passthrough()

/**
 * The price (USD per million input tokens) of the model the sessions use, from the engine's catalogue and
 * provider config; null when the model has none (its requests are unpriced) or it cannot be read.
 */
export async function inputPricePerMTok(client: Client): Promise<number | null> {
  const [config, providers] = await Promise.all([client.config.get().catch(() => undefined), client.config.providers().catch(() => undefined)])
  const model = ConfigModel.safeParse(config?.data).data?.model
  const list = Providers.safeParse(providers?.data).data?.providers
  if (!model || !list) return null
  const slash = model.indexOf("/")
  const price = list.find((p) => p.id === model.slice(0, slash))?.models[model.slice(slash + 1)]?.cost?.input
  return price !== undefined && price > 0 ? price : null
}
