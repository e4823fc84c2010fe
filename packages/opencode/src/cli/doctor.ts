import { Sandbox } from "../scheduler/runtime/sandbox/sandbox"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigDirs, LaunchConfig, Paths, Pin, runProcess } from "../engine"
import { Roles } from "../agent"
import { Preflight } from "../scheduler/runtime/preflight"
import { Launch } from "./launch"
import { Args } from "./args"
import { Ui } from "./ui"
import { Readiness } from "../scheduler/runtime/readiness.ts"
import { AnalyserReadiness } from "../scheduler/runtime/gates/analysers/readiness.ts"
import { REGISTRY } from "../scheduler/runtime/gates/registry.ts"
import { DeployDoctor } from "../scheduler/runtime/deploy/doctor"
import { HouseDoctor } from "../scheduler/runtime/house/doctor"
import { UiTools } from "../scheduler/runtime/verify/ui-tools"
import { ServiceProbe } from "../scheduler/runtime/verify/service-probe"
import { FarmDoctor } from "../scheduler/runtime/toolchain/farm-doctor"
import { CommandLine } from "./command-line"
import { AirPaths } from "../scheduler/core/air-paths"

type Check = { name: string; ok: boolean; detail: string; fix?: string }

async function versionOf(cmd: string, args = ["--version"]): Promise<string | undefined> {
  try {
    const out = await runProcess(cmd, args, { timeoutMs: 30_000 })
    if (out.code !== 0) return undefined
    return (out.stdout || out.stderr).trim().split("\n")[0]
  } catch {
    return undefined
  }
}

async function tool(name: string, fix: string, cmd = name): Promise<Check> {
  const v = await versionOf(cmd)
  return v ? { name, ok: true, detail: v } : { name, ok: false, detail: "not found", fix }
}

async function engine(): Promise<Check[]> {
  const checks: Check[] = []
  let pinned = "?"
  try {
    pinned = Pin.engineVersion()
    const installed = Pin.packages.map((p) => {
      try {
        return JSON.parse(readFileSync(join(Paths.packageRoot, "node_modules", p, "package.json"), "utf8")).version as string
      } catch {
        return "(not installed)"
      }
    })
    const drift = installed.filter((v) => v !== pinned)
    checks.push(
      drift.length
        ? { name: "engine pin", ok: false, detail: `pinned ${pinned}, installed ${installed.join(", ")}`, fix: "run `bun install` in the AirCoding checkout" }
        : { name: "engine pin", ok: true, detail: `opencode-ai, @opencode-ai/plugin, @opencode-ai/sdk @ ${pinned}` },
    )
  } catch (err) {
    checks.push({ name: "engine pin", ok: false, detail: (err as Error).message, fix: "pin all three packages to one version" })
  }
  const v = await versionOf(Paths.opencodeBinary())
  checks.push(
    !v
      ? { name: "engine", ok: false, detail: `no engine at ${Paths.opencodeBinary()}`, fix: "run `bun install` in the AirCoding checkout" }
      : v === pinned
        ? { name: "engine", ok: true, detail: `opencode ${v} (${Paths.opencodeBinary()})` }
        : { name: "engine", ok: false, detail: `opencode ${v}, expected ${pinned}`, fix: "run `bun install` to restore the pinned engine" },
  )
  return checks
}

function configDirs(dir: string): Check {
  try {
    const outcomes = ConfigDirs.prepareAll(dir)
    const skipped = outcomes.filter((o) => o.action === "skipped")
    if (skipped.length)
      return { name: "config dirs", ok: true, detail: skipped.map((s) => s.note).join("; ") }
    return { name: "config dirs", ok: true, detail: outcomes.map((o) => o.dir).join(", ") + " ready (no start-up install)" }
  } catch (err) {
    return { name: "config dirs", ok: false, detail: (err as Error).message, fix: "check that the npm registry is reachable once, then rerun" }
  }
}

/** One look at the engine serves two checks: AirCoding loaded, and a model configured. */
async function pluginAndModel(dir: string, env: NodeJS.ProcessEnv): Promise<Check[]> {
  // The doctor asks the engine itself, never a remembered answer.
  const result = await Launch.verify(dir, env, { fresh: true })
  const plugin: Check = result.ok
    ? { name: "plugin", ok: true, detail: `agents ${result.agents.join(", ")} registered; main offered ${Roles.coordinatorTools("main").join(", ")}` }
    : { name: "plugin", ok: false, detail: result.message.split("\n")[0]!, fix: result.message.split("\n").slice(1).join(" ") }
  const fix = `set "model": "<provider>/<model>" in ~/.config/opencode/opencode.json and run \`opencode auth login\` (or try \`${CommandLine.name()} demo\`, which needs none)`
  const model: Check = !result.config
    ? { name: "model", ok: false, detail: "could not read the engine's resolved config", fix }
    : result.config.model
      ? { name: "model", ok: true, detail: String(result.config.model) }
      : { name: "model", ok: false, detail: "no model configured", fix }
  return [plugin, model]
}

/** The OS sandbox around workers' commands and the gates: bubblewrap installed and able to start. */
/** What a service task's gate needs: tcpdump, nc, the OS sandbox and the privileges for a namespace of its own. */
function serviceProbe(): Check {
  const name = "service probe"
  const ready = ServiceProbe.readiness()
  if (!ready.ok) return { name, ok: false, detail: `service tasks cannot be probed: ${ready.message}`, ...(ready.install ? { fix: `${ready.install} (or ./start.sh setup)` } : {}) }
  return { name, ok: true, detail: "tcpdump, nc and network namespaces available: service tasks are probed on a loopback of their own" }
}

function sandbox(): Check {
  const c = Sandbox.check(true)
  return c.ok
    ? { name: "sandbox", ok: true, detail: `${c.version}: workers' commands and the gates run inside it` }
    : { name: "sandbox", ok: false, detail: c.message, fix: `${Sandbox.INSTALL_HINT}; or allow running without it: "sandboxFallback": true in ${AirPaths.CONFIG}` }
}

export async function doctor(dirArg: string | undefined, opts: { json: boolean }): Promise<number> {
  const dir = Args.projectDir(dirArg, "doctor")
  const env = LaunchConfig.environment({})
  const checks: Check[] = [
    ...(await engine()),
    configDirs(dir),
    ...(await Promise.all([
      pluginAndModel(dir, env),
      tool("bun", "npm install -g bun (or run ./start.sh, which installs it)", process.execPath),
      tool("git", "sudo apt-get install git"),
      Preflight.identityCheck(dir),
      tool("cmake", "sudo apt-get install cmake"),
      tool("ctest", "sudo apt-get install cmake (ctest ships with it)"),
      tool("cppcheck", "sudo apt-get install cppcheck"),
      tool("ccache", "sudo apt-get install ccache (macOS: brew install ccache)"),
      Readiness.checks(dir),
      // Each analyser of another language the registry runs (mypy, pylint, tsc, go vet, clippy): its tool and version.
      AnalyserReadiness.checks(dir, REGISTRY.flatMap((gate) => ("backend" in gate ? [gate.backend] : []))),
      DeployDoctor.checks(dir),
      FarmDoctor.checks(dir),
    ])).flat(),
    ...HouseDoctor.checks(dir),
    sandbox(),
    UiTools.doctorCheck(),
    serviceProbe(),
  ]
  const failed = checks.filter((c) => !c.ok)
  if (opts.json) {
    process.stdout.write(JSON.stringify({ ok: failed.length === 0, checks }, null, 2) + "\n")
  } else {
    const width = Math.max(...checks.map((c) => c.name.length))
    for (const c of checks) {
      const mark = c.ok ? Ui.green("✓") : Ui.red("✗")
      process.stdout.write(`${mark} ${c.name.padEnd(width)}  ${c.detail}\n`)
      if (!c.ok && c.fix) process.stdout.write(`  ${" ".repeat(width)}  ${Ui.yellow("fix:")} ${c.fix}\n`)
    }
    process.stdout.write(failed.length ? `\n${failed.length} check(s) failed.\n` : "\nAll checks passed.\n")
  }
  return failed.length ? 1 : 0
}
