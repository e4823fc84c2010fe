import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { opencodeProviderConfig, startScriptedModel, type ScriptedModel, type Scenario } from "@aircoding/scripted-model"
import { LaunchConfig, Paths, runProcess, type Completed } from "../../src/engine"
import { aircodingBin, bunBinary, type Sandbox } from "./sandbox"
import { withFinalReview } from "./final-review"

/** Starts the scripted model for a test, with its log in the sandbox. */
export async function scriptedModel(sandbox: Sandbox, scenario: Scenario | Record<string, unknown>): Promise<ScriptedModel> {
  return startScriptedModel({ scenario: scenario as Scenario, logPath: join(sandbox.root, "model.jsonl") })
}

/** The environment `aircoding` itself would give the engine, pointed at the scripted model. */
export function engineEnv(sandbox: Sandbox, model: ScriptedModel, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return LaunchConfig.environment({ overlay: opencodeProviderConfig(model.url), offline: true, extra }, sandbox.env)
}

/** `opencode run --agent main --format json` with the prompt on stdin, as a user would run it headless. */
export function opencodeRun(cwd: string, env: NodeJS.ProcessEnv, prompt: string, timeoutMs = 240_000): Promise<Completed> {
  return runProcess(Paths.opencodeBinary(), ["run", "--agent", "main", "--format", "json"], { cwd, env, input: prompt, timeoutMs })
}

/** The aircoding CLI, run by bun as a user runs it. */
export function aircoding(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<Completed> {
  return runProcess(bunBinary(), [aircodingBin, ...args], { ...opts, timeoutMs: opts.timeoutMs ?? 600_000 })
}

export function writeScenario(sandbox: Sandbox, scenario: Record<string, unknown>, name = "scenario.json"): string {
  const file = join(sandbox.root, name)
  writeFileSync(file, JSON.stringify(withFinalReview(scenario), null, 2))
  return file
}

/** Tool results from `opencode run --format json` output, in order. */
export function toolUses(stdout: string): { tool: string; status: string; output: string }[] {
  const uses: { tool: string; status: string; output: string }[] = []
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue
    try {
      const ev = JSON.parse(line)
      if (ev.type === "tool_use") uses.push({ tool: ev.part.tool, status: ev.part.state?.status, output: String(ev.part.state?.output ?? ev.part.state?.error ?? "") })
    } catch {}
  }
  return uses
}

export function texts(stdout: string): string {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .flatMap((l) => {
      try {
        const ev = JSON.parse(l)
        return ev.type === "text" ? [ev.part.text as string] : []
      } catch {
        return []
      }
    })
    .join("\n")
}
