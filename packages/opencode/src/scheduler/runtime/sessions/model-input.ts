import { readFileSync, statSync } from "node:fs"
import type { PluginInput } from "@opencode-ai/plugin"
import { z } from "zod"

type Client = PluginInput["client"]

/**
 * Whether the model an agent runs on takes images, and pictures as the engine's prompt parts. A screenshot is sent
 * to a session only when its model takes images (the engine's model config: `attachment: true` or "image" in
 * `modalities.input`, which the engine reports as the model's capabilities); otherwise the prompt says so and
 * names the files, and the text (window tree, changed share, verdicts) carries the evidence alone.
 */
export namespace ModelInput {
  /** A picture for a session's prompt: a PNG on disk and what it shows. */
  export type Image = { path: string; label: string }
  /** A picture above this is named in the text but not sent (a screenshot of a large display is far below it). */
  export const MAX_IMAGE_BYTES = 4 * 1024 * 1024

  // The engine's answers, read at a boundary: only the fields this decision reads.
  const ConfigAnswer = z.looseObject({ model: z.string().optional(), agent: z.record(z.string(), z.looseObject({ model: z.string().optional() }).nullable()).optional() })
  const ModelAnswer = z.looseObject({
    capabilities: z.looseObject({ attachment: z.boolean().optional(), input: z.looseObject({ image: z.boolean().optional() }).optional() }).optional(),
    attachment: z.boolean().optional(),
    modalities: z.looseObject({ input: z.array(z.string()).optional() }).optional(),
  })
  const ProvidersAnswer = z.looseObject({
    providers: z.array(z.looseObject({ id: z.string(), models: z.record(z.string(), ModelAnswer) })),
    default: z.record(z.string(), z.string()).optional(),
  })

  /**
   * Whether `agent`'s model takes images, from the engine's config and provider list (in `directory`'s instance).
   * The agent's own model, else the config's `model`, else the first provider's default. False when the engine
   * does not say (an answer it cannot read, a model it does not list): text is never wrong, an image may be refused.
   */
  export async function takesImages(client: Client, agent: string, directory: string): Promise<boolean> {
    try {
      const [config, providers] = await Promise.all([client.config.get({ query: { directory } }), client.config.providers({ query: { directory } })])
      return decide(config.data, providers.data, agent)
    } catch {
      return false
    }
  }

  /** The decision on the engine's two answers (exported for its unit test). */
  export function decide(config: unknown, providers: unknown, agent: string): boolean {
    const c = ConfigAnswer.safeParse(config)
    const p = ProvidersAnswer.safeParse(providers)
    if (!p.success) return false
    const chosen = (c.success ? (c.data.agent?.[agent]?.model ?? c.data.model) : undefined) ?? firstDefault(p.data)
    if (!chosen) return false
    const slash = chosen.indexOf("/")
    const model = p.data.providers.find((x) => x.id === chosen.slice(0, slash))?.models[chosen.slice(slash + 1)]
    if (!model) return false
    return model.capabilities?.input?.image === true || model.capabilities?.attachment === true || model.attachment === true || (model.modalities?.input ?? []).includes("image")
  }

  function firstDefault(p: z.infer<typeof ProvidersAnswer>): string | undefined {
    const [provider, model] = Object.entries(p.default ?? {})[0] ?? []
    return provider && model ? `${provider}/${model}` : undefined
  }

  /** The engine's file parts for the pictures that exist and are small enough (data: URLs: the engine reads nothing). */
  export function parts(images: readonly Image[]): { type: "file"; mime: string; filename: string; url: string }[] {
    return images.flatMap((image) => {
      try {
        if (statSync(image.path).size > MAX_IMAGE_BYTES) return []
        const data = readFileSync(image.path).toString("base64")
        return [{ type: "file" as const, mime: "image/png", filename: image.label, url: `data:image/png;base64,${data}` }]
      } catch {
        return []
      }
    })
  }
}
