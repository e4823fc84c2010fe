import { existsSync, readFileSync } from "node:fs"
import { z } from "zod"
import { Strict } from "../core/strict"
import { Language } from "../../agent/language"
import { DEFAULT_RUN_CONFIG, type BudgetLimits, type RunConfig } from "../core/event.schema"
import { NotifyConfig } from "./notify/config"
import { AirPaths } from "../core/air-paths"

/**
 * AirCoding's own settings. OpenCode refuses unknown keys in opencode.json, so they live in
 * .air/shared/config.json (committed with the project); environment variables override them for
 * one run (headless flags are passed that way).
 */
export namespace Settings {
  export const Schema = z
    .object({
      language: z
        .string()
        .default("auto")
        .transform((v, ctx) => {
          try {
            return Language.parse(v)
          } catch (err) {
            ctx.addIssue({ code: "custom", message: (err as Error).message })
            return z.NEVER
          }
        })
        .describe('"auto" (the user\'s language) or a locked tag such as "zh-CN" or "en"'),
      concurrency: z.number().int().min(1).max(32).default(DEFAULT_RUN_CONFIG.concurrency),
      repairBudget: z.number().int().min(0).default(DEFAULT_RUN_CONFIG.repairBudget),
      stallRetries: z.number().int().min(0).default(DEFAULT_RUN_CONFIG.stallRetries),
      inactivityMs: z.number().int().min(1).default(DEFAULT_RUN_CONFIG.inactivityMs),
      wallClockMs: z.number().int().min(1).default(DEFAULT_RUN_CONFIG.wallClockMs),
      autoConfirm: z.boolean().default(false),
      /** Budgets (0 = no limit): model requests and tokens per task and per run, minutes per run. */
      taskRequests: z.number().int().min(0).default(0),
      runRequests: z.number().int().min(0).default(0),
      taskTokens: z.number().int().min(0).default(0),
      runTokens: z.number().int().min(0).default(0),
      runMinutes: z.number().int().min(0).default(0),
      /** Money budgets in USD (0 = no limit), as the engine prices each request; shared by all parallel sessions. */
      runCostUsd: z.number().min(0).default(0),
      taskCostUsd: z.number().min(0).default(0),
      /**
       * Tokens a session is assumed to read before any session of its role reported a cost: times the model's
       * input price, the first estimate held back against the money budget when a session starts.
       */
      costEstimateTokens: z.number().int().min(0).default(30_000),
      /**
       * At most this many tasks waiting to merge are merged as one batch: built and tested once together, then
       * landed; a failing batch is split in halves until the task that breaks it is found. 1: one at a time.
       */
      mergeBatch: z.number().int().min(1).max(32).default(DEFAULT_RUN_CONFIG.mergeBatch ?? 4),
      /** How long a merge waits for the merge lock another process holds before the task blocks naming the holder. */
      mergeLockMs: z.number().int().min(1).default(120_000),
      /** How long air_listen waits without news before it returns a progress summary. */
      listenMs: z.number().int().min(1).default(4 * 60_000),
      /**
       * When no OS sandbox can start (no bubblewrap, user namespaces off): false refuses workers' commands
       * and fails the gates; true runs them with the text checks only (the user's choice, said in the log).
       */
      sandboxFallback: z.boolean().default(false),
      /**
       * The engine retries a retryable provider error (429, 5xx, overloaded) on its own, without end: past this
       * many retries of one call, or `retryMinutes` from its first retry, the session is given up on.
       */
      retryAttempts: z.number().int().min(1).default(6),
      retryMinutes: z.number().min(0.01).default(10),
      /** true: repair patterns learned here also go to the user's store, which every project on the machine reads. */
      shareKnowledge: z.boolean().default(false),
      /** Webhooks and the desktop told when a question waits, the run ends, a deploy rolls back (runtime/notify/). */
      notify: NotifyConfig.Schema.optional(),
    })
    .strict()
  export type Settings = z.infer<typeof Schema>

  const envKeys: Record<string, keyof Settings> = {
    AIRCODING_LANGUAGE: "language",
    AIRCODING_CONCURRENCY: "concurrency",
    AIRCODING_REPAIR_BUDGET: "repairBudget",
    AIRCODING_INACTIVITY_MS: "inactivityMs",
    AIRCODING_WALLCLOCK_MS: "wallClockMs",
    AIRCODING_AUTO_CONFIRM: "autoConfirm",
    AIRCODING_LISTEN_MS: "listenMs",
    AIRCODING_MERGE_LOCK_MS: "mergeLockMs",
    AIRCODING_MERGE_BATCH: "mergeBatch",
    AIRCODING_TASK_REQUESTS: "taskRequests",
    AIRCODING_RUN_REQUESTS: "runRequests",
    AIRCODING_TASK_TOKENS: "taskTokens",
    AIRCODING_RUN_TOKENS: "runTokens",
    AIRCODING_RUN_MINUTES: "runMinutes",
    AIRCODING_RUN_COST_USD: "runCostUsd",
    AIRCODING_TASK_COST_USD: "taskCostUsd",
    AIRCODING_SANDBOX_FALLBACK: "sandboxFallback",
    AIRCODING_RETRY_ATTEMPTS: "retryAttempts",
    AIRCODING_RETRY_MINUTES: "retryMinutes",
    AIRCODING_SHARE_KNOWLEDGE: "shareKnowledge",
  }

  export function path(root: string): string {
    return AirPaths.config(root)
  }

  /** config.json or an AIRCODING_* variable cannot be used; said in one line naming the file (or variable) and key. */
  export class Invalid extends Error {
    readonly _tag = "SettingsInvalid"
    constructor(
      readonly file: string,
      detail: string,
    ) {
      super(`${file}: ${detail}`)
      this.name = "SettingsInvalid"
    }
  }

  /** The file's own settings, checked on their own so a mistake names the file, not the environment. */
  function readFile(file: string): Record<string, unknown> {
    if (!existsSync(file)) return {}
    const text = Strict.decode(readFileSync(file), file)
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch (err) {
      throw new Invalid(file, `not valid JSON (${(err as Error).message}); fix the file or delete it to use the defaults`)
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Invalid(file, "must be a JSON object, e.g. { \"concurrency\": 4 }")
    const parsed = Schema.safeParse(raw)
    if (!parsed.success) throw new Invalid(file, Strict.oneLine(Schema, parsed.error))
    return raw as Record<string, unknown>
  }

  export function load(root: string, env: NodeJS.ProcessEnv = process.env): Settings {
    const file = path(root)
    const raw = readFile(file)
    const fromEnv: string[] = []
    for (const [key, field] of Object.entries(envKeys)) {
      const value = env[key]
      if (value === undefined || value === "") continue
      raw[field] = field === "language" ? value : field === "autoConfirm" || field === "sandboxFallback" || field === "shareKnowledge" ? value === "1" || value === "true" : Number(value)
      fromEnv.push(key)
    }
    const parsed = Schema.safeParse(raw)
    if (!parsed.success) {
      // The file passed on its own, so the environment is what is wrong.
      const field = parsed.error.issues[0]?.path[0]
      const variable = Object.entries(envKeys).find(([key, f]) => f === field && fromEnv.includes(key))?.[0]
      throw new Invalid(variable ?? "AIRCODING_* variables", Strict.oneLine(Schema, parsed.error))
    }
    return parsed.data
  }

  export function budgets(s: Settings): BudgetLimits {
    const { taskRequests, runRequests, taskTokens, runTokens, runMinutes, runCostUsd, taskCostUsd } = s
    return { taskRequests, runRequests, taskTokens, runTokens, runMinutes, runCostUsd, taskCostUsd }
  }

  export function runConfig(s: Settings): RunConfig {
    const { concurrency, repairBudget, stallRetries, inactivityMs, wallClockMs, autoConfirm, mergeBatch } = s
    return { concurrency, repairBudget, stallRetries, inactivityMs, wallClockMs, autoConfirm, budgets: budgets(s), finalReview: true, mergeBatch }
  }
}
