import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { Paths } from "./paths"
import { Pin } from "./pin"
import { Proc } from "../scheduler/runtime/process"

/**
 * OpenCode installs @opencode-ai/plugin into every config dir at start-up and, when a plugin is
 * configured, waits for it: offline that is ~70 s of retries on every run (opencode-notes, "the
 * 70-second trap"). A config dir whose package.json, lock and node_modules already agree is left
 * alone, so we make every config dir agree before the engine starts.
 */
export namespace ConfigDirs {
  export type Outcome = { dir: string; action: "ready" | "linked" | "skipped"; note?: string }

  /** The TUI config AirCoding writes beside OpenCode's global config (launch-config.ts); only the TUI reads it. */
  export const TUI_CONFIG_FILE = "aircoding-tui.json"

  export function globalConfigDir(env: NodeJS.ProcessEnv = process.env): string {
    const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config")
    return join(base, "opencode")
  }

  /** The dirs OpenCode will install into for a project: the global one, and the project's .opencode if present. */
  export function forProject(projectDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
    const dirs = [globalConfigDir(env)]
    const local = join(projectDir, ".opencode")
    if (existsSync(local)) dirs.push(local)
    return dirs
  }

  function pluginVersionIn(dir: string): string | undefined {
    try {
      return JSON.parse(readFileSync(join(dir, "node_modules", "@opencode-ai", "plugin", "package.json"), "utf8")).version
    } catch {
      return undefined
    }
  }

  /** Installs the template dir's node_modules once (from the committed lock, no scripts). */
  export function ensureTemplate(): void {
    const version = Pin.engineVersion()
    if (pluginVersionIn(Paths.engineConfigDir) === version) return
    const install = Proc.runSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: Paths.engineConfigDir,
      env: process.env,
      timeoutMs: 10 * 60_000,
      stderr: "inherit",
    })
    if (!install.ok || pluginVersionIn(Paths.engineConfigDir) !== version)
      throw new Error(
        `engine-config template does not hold @opencode-ai/plugin@${version}; run: cd ${Paths.engineConfigDir} && npm install --ignore-scripts`,
      )
  }

  export function prepare(dir: string): Outcome {
    const version = Pin.engineVersion()
    if (pluginVersionIn(dir) === version) return { dir, action: "ready" }
    mkdirSync(dir, { recursive: true })
    const pkgPath = join(dir, "package.json")
    if (existsSync(pkgPath)) {
      const deps = Object.keys(JSON.parse(readFileSync(pkgPath, "utf8")).dependencies ?? {})
      const onlyPlugin = deps.every((d) => d === "@opencode-ai/plugin")
      if (!onlyPlugin || existsSync(join(dir, "node_modules")))
        return {
          dir,
          action: "skipped",
          note: `${dir} has its own dependencies; OpenCode will install them at start-up (needs the npm registry)`,
        }
    }
    ensureTemplate()
    copyFileSync(join(Paths.engineConfigDir, "package.json"), pkgPath)
    copyFileSync(join(Paths.engineConfigDir, "package-lock.json"), join(dir, "package-lock.json"))
    if (!existsSync(join(dir, ".gitignore"))) writeFileSync(join(dir, ".gitignore"), "node_modules\npackage.json\npackage-lock.json\n")
    // A link, not a copy: one install serves every config dir on the machine (and every test's temp HOME).
    symlinkSync(join(Paths.engineConfigDir, "node_modules"), join(dir, "node_modules"), "junction")
    return { dir, action: "linked" }
  }

  export function prepareAll(projectDir: string, env: NodeJS.ProcessEnv = process.env): Outcome[] {
    return forProject(projectDir, env).map((d) => prepare(d))
  }
}
