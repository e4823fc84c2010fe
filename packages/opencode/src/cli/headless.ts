import { Paths, runProcess } from "../engine"
import type { ProviderFault } from "../scheduler/core/provider-fault"
import { ProviderError } from "../scheduler/runtime/sessions/provider-error"
import { JsonLines } from "../scheduler/runtime/store/jsonl"
import { resolveLang, t, type Lang } from "../text/words"
import { Launch } from "./launch"

/** What a headless run produced, read from the engine's JSONL event stream. */
export type EngineTranscript = {
  exitCode: number
  text: string
  toolCalls: { tool: string; status: string; output?: string }[]
  /** Main's failed turns in words, one line each (never the engine's JSON). */
  errors: string[]
  /** The same failures, classified: whether waiting or a fresh session could cure them. */
  faults: ProviderFault[]
  stderr: string
}

export function parseEngineEvents(stdout: string, lang: Lang = "en"): Omit<EngineTranscript, "exitCode" | "stderr"> {
  const texts: string[] = []
  const toolCalls: EngineTranscript["toolCalls"] = []
  const errors: string[] = []
  const faults: ProviderFault[] = []
  // The engine's --format json output is JSON lines; anything else it prints on stdout is skipped.
  for (const ev of JsonLines.parse<any>(stdout)) {
    if (!ev || typeof ev !== "object") continue
    const part = ev.part ?? {}
    if (ev.type === "text" && part.text) texts.push(part.text)
    else if (ev.type === "tool_use")
      toolCalls.push({ tool: part.tool, status: part.state?.status, output: part.state?.output ?? part.state?.error })
    else if (ev.type === "error") {
      const { status: _, ...fault } = ProviderError.classify(ev.error ?? ev)
      faults.push(fault)
      errors.push(t(lang, "main.failed", { fault: t(lang, `fault.${fault.class}`), message: fault.message }))
    }
  }
  return { text: texts.join("\n"), toolCalls, errors, faults }
}

/** Runs the main agent once, headless, with the prompt on stdin (argv re-quotes messages); `onOutput` sees the engine print. */
export async function runMainAgent(prepared: Launch.Prepared, prompt: string, signal?: AbortSignal, onOutput?: () => void): Promise<EngineTranscript> {
  const out = await runProcess(Paths.opencodeBinary(), ["run", "--agent", "main", "--format", "json"], {
    cwd: prepared.dir,
    env: prepared.env,
    input: prompt,
    ...(signal ? { signal } : {}),
    ...(onOutput ? { onOutput } : {}),
  })
  return { exitCode: out.code, stderr: out.stderr, ...parseEngineEvents(out.stdout, langOf(prepared.dir)) }
}

/**
 * Main's turn when it was stopped for its silence before any run began: a request that timed out, which
 * waiting may cure, said in words.
 */
export function silentTranscript(transcript: EngineTranscript, silenceMs: number, lang: Lang): EngineTranscript {
  const seconds = Math.round(silenceMs / 1000)
  const message = t(lang, "main.silent", { seconds })
  return { ...transcript, errors: [message], faults: [{ class: "timeout", retryable: true, message }] }
}

/** The language of the project's configuration, English when it cannot be read. */
export function langOf(dir: string): Lang {
  try {
    return resolveLang(dir)
  } catch {
    return "en"
  }
}
