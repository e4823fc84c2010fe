import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { startScriptedModel, opencodeProviderConfig, type ScriptedModel } from "@aircoding/scripted-model"
import { ConfigDirs, LaunchConfig, Paths, Verify } from "../engine"
import { Roles } from "../agent"
import { Preflight } from "../scheduler/runtime/preflight"
import { CommandLine } from "./command-line"
import { LaunchError, UsageError, Ui } from "./ui"
import { TraceConfig } from "../scheduler/runtime/trace/config"
import { EngineRelay } from "../scheduler/runtime/trace/engine-relay"

/** Everything a command needs before it starts the engine in a project directory. */
export namespace Launch {
  export type Prepared = { dir: string; env: NodeJS.ProcessEnv; model?: ScriptedModel; close(): Promise<void> }

  /** AirCoding as the engine must have resolved it: every role registered, Main offered its tools. */
  export function verify(dir: string, env: NodeJS.ProcessEnv, opts: { fresh?: boolean } = {}) {
    return Verify.plugin(dir, env, Roles.names, Roles.coordinatorTools("main"), opts)
  }

  /**
   * Without a model of the user's choosing the engine would pick one itself, over the network (offline it
   * spins for a minute before "Cannot connect to API"): say so before anything opens, with the fix. The
   * demo hint names the project folder: without it the TUI would open wherever the command is typed.
   */
  export function modelProblem(config: Record<string, any> | undefined, dir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    if (config?.model || config?.agent?.main?.model) return undefined
    return [
      "no model is configured, and AirCoding never falls back to one on its own.",
      'Fix: set "model": "<provider>/<model>" in ~/.config/opencode/opencode.json (and `opencode auth login` for its key),',
      `or try the offline demo in the TUI with the scripted model: ${CommandLine.reopen(dir, join(Paths.scenarios, "demo-chat.json"), env)}`,
    ].join("\n")
  }

  export async function prepare(
    dir: string,
    opts: { scripted?: string; extra?: Record<string, string>; quiet?: boolean } = {},
  ): Promise<Prepared> {
    for (const outcome of ConfigDirs.prepareAll(dir)) if (outcome.note && !opts.quiet) Ui.step(outcome.note)
    let model: ScriptedModel | undefined
    if (opts.scripted) {
      const scenario = resolve(opts.scripted)
      if (!existsSync(scenario)) throw new UsageError(`scenario not found: ${scenario}`)
      model = await startScriptedModel({ scenario, logPath: process.env.AIRCODING_SCRIPTED_LOG })
    }
    // The engine's spans go to our relay, which keeps those of the run (its model calls and tools) for our export.
    const relay = TraceConfig.relayed(process.env) ? await EngineRelay.start(dir) : undefined
    const env = LaunchConfig.environment({
      overlay: model ? opencodeProviderConfig(model.url, undefined, model.price) : undefined,
      offline: Boolean(model),
      // Workers commit with git themselves: with no identity on the machine they get AirCoding's.
      extra: { ...(await Preflight.identityEnv(dir)), ...(relay ? TraceConfig.relayEnvironment(relay.endpoint, process.env) : {}), ...opts.extra },
    })
    const close = async () => {
      try {
        await model?.close()
      } finally {
        // Its spans are written on close: the run's trace export reads them after.
        await relay?.close()
      }
    }
    const verified = await verify(dir, env)
    if (!verified.ok) {
      await close()
      throw new LaunchError(verified.message)
    }
    const noModel = model ? undefined : modelProblem(verified.config, dir)
    if (noModel) {
      await close()
      throw new LaunchError(noModel)
    }
    return { dir, env, model, close }
  }
}

