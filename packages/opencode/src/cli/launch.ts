import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"
import { startScriptedModel, opencodeProviderConfig, type ScriptedModel } from "@aircoding/scripted-model"
import { ConfigDirs, LaunchConfig, Verify } from "../engine"
import { Roles } from "../agent"
import { Preflight } from "../runtime/preflight"
import { UsageError, Ui } from "./ui"

/** Everything a command needs before it starts the engine in a project directory. */
export namespace Launch {
  export type Prepared = { dir: string; env: NodeJS.ProcessEnv; model?: ScriptedModel; close(): Promise<void> }

  export function projectDir(arg: string | undefined): string {
    const dir = resolve(arg ?? ".")
    if (!existsSync(dir)) throw new UsageError(`directory not found: ${dir}`)
    if (!statSync(dir).isDirectory()) throw new UsageError(`not a directory: ${dir}`)
    return dir
  }

  /** AirCoding as the engine must have resolved it: every role registered, Main offered its tools. */
  export function verify(dir: string, env: NodeJS.ProcessEnv) {
    return Verify.plugin(dir, env, Roles.names, Roles.coordinatorTools("main"))
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
    const env = LaunchConfig.environment({
      overlay: model ? opencodeProviderConfig(model.url) : undefined,
      offline: Boolean(model),
      // Workers commit with git themselves: with no identity on the machine they get AirCoding's.
      extra: { ...(await Preflight.identityEnv(dir)), ...opts.extra },
    })
    const close = async () => {
      await model?.close()
    }
    const verified = await verify(dir, env)
    if (!verified.ok) {
      await close()
      throw new LaunchError(verified.message)
    }
    return { dir, env, model, close }
  }
}

export class LaunchError extends Error {
  override readonly name = "LaunchError"
}
