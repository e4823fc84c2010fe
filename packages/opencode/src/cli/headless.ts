import { Paths, runProcess } from "../engine"
import { Launch } from "./launch"

/** What a headless run produced, read from the engine's JSONL event stream. */
export type EngineTranscript = {
  exitCode: number
  text: string
  toolCalls: { tool: string; status: string; output?: string }[]
  errors: string[]
  stderr: string
}

export function parseEngineEvents(stdout: string): Omit<EngineTranscript, "exitCode" | "stderr"> {
  const texts: string[] = []
  const toolCalls: EngineTranscript["toolCalls"] = []
  const errors: string[] = []
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue
    let ev: any
    try {
      ev = JSON.parse(line)
    } catch {
      continue
    }
    const part = ev.part ?? {}
    if (ev.type === "text" && part.text) texts.push(part.text)
    else if (ev.type === "tool_use")
      toolCalls.push({ tool: part.tool, status: part.state?.status, output: part.state?.output ?? part.state?.error })
    else if (ev.type === "error") errors.push(JSON.stringify(ev.error ?? ev))
  }
  return { text: texts.join("\n"), toolCalls, errors }
}

/** Runs the main agent once, headless, with the prompt on stdin (argv re-quotes messages). */
export async function runMainAgent(prepared: Launch.Prepared, prompt: string, signal?: AbortSignal): Promise<EngineTranscript> {
  const out = await runProcess(Paths.opencodeBinary(), ["run", "--agent", "main", "--format", "json"], {
    cwd: prepared.dir,
    env: prepared.env,
    input: prompt,
    ...(signal ? { signal } : {}),
  })
  return { exitCode: out.code, stderr: out.stderr, ...parseEngineEvents(out.stdout) }
}
