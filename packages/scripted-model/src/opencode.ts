import { MODEL_ID } from "./server.ts"

/**
 * The part of an opencode.json (or OPENCODE_CONFIG_CONTENT) that makes OpenCode use the scripted
 * model for everything, including the small model it uses for titles.
 */
export function opencodeProviderConfig(url: string, model = MODEL_ID, price?: { input: number; output: number }) {
  return {
    provider: {
      scripted: {
        npm: "@ai-sdk/openai-compatible",
        name: "Scripted model",
        options: { baseURL: url, apiKey: "scripted" },
        models: {
          // Takes images, as the models people review with do: a ui task's Reviewer is sent its screenshots. With a price
          // the engine costs each request (AssistantMessage.cost); without one its requests are unpriced.
          [model]: { name: `Scripted (${model})`, tool_call: true, attachment: true, modalities: { input: ["text", "image"], output: ["text"] }, limit: { context: 200_000, output: 32_000 }, ...(price ? { cost: price } : {}) },
        },
      },
    },
    model: `scripted/${model}`,
    small_model: `scripted/${model}`,
  }
}
