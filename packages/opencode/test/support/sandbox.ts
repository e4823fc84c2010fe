import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { expect } from "vitest"
import { ConfigDirs, Paths, Pin } from "../../src/engine"

/**
 * A throw-away machine for one test: HOME and every XDG dir inside a temp folder, OpenCode kept
 * offline, a git identity that needs no global config. Nothing a test does leaks into the real HOME.
 */
export type Sandbox = { root: string; env: NodeJS.ProcessEnv; project(name?: string): string; cleanup(): void }

export type SandboxOptions = {
  /**
   * A machine where OpenCode never ran: no engine database yet, so the launch asks the engine under its lock.
   * Without it the sandbox's data dir holds the database an engine leaves on its first start (as on any
   * machine where OpenCode has run once), which spares every test that start (about 6 s of CPU).
   */
  freshEngine?: boolean
}

/** `air-<test file>-`: a kept sandbox (AIR_KEEP_SANDBOX=1) and the processes running in one say whose they are. */
function defaultPrefix(): string {
  const file = expect.getState().testPath
  return file ? `air-${basename(file).replace(/\.test\.tsx?$/, "")}-` : "air-test-"
}

export function makeSandbox(prefix = defaultPrefix(), opts: SandboxOptions = {}): Sandbox {
  const root = mkdtempSync(join(tmpdir(), prefix))
  const dirs = { HOME: "home", XDG_CONFIG_HOME: "config", XDG_DATA_HOME: "data", XDG_CACHE_HOME: "cache", XDG_STATE_HOME: "state" }
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("OPENCODE_") && !k.startsWith("AIRCODING_")) env[k] = v
  for (const [key, sub] of Object.entries(dirs)) {
    const path = join(root, sub)
    mkdirSync(path, { recursive: true })
    env[key] = path
  }
  Object.assign(env, {
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    GIT_AUTHOR_NAME: "AirCoding Test",
    GIT_AUTHOR_EMAIL: "test@aircoding.invalid",
    GIT_COMMITTER_NAME: "AirCoding Test",
    GIT_COMMITTER_EMAIL: "test@aircoding.invalid",
    NO_COLOR: "1",
  })
  // The engine's start-up install would otherwise cost ~70 s offline: prepare the sandbox's config dir.
  ConfigDirs.prepare(ConfigDirs.globalConfigDir(env))
  if (!opts.freshEngine) {
    const template = engineDatabase(env)
    const data = join(env.XDG_DATA_HOME!, "opencode")
    mkdirSync(data, { recursive: true })
    for (const name of readdirSync(template)) copyFileSync(join(template, name), join(data, name))
  }
  return {
    root,
    env,
    project(name = "project") {
      const dir = join(root, name)
      mkdirSync(dir, { recursive: true })
      if (!existsSync(join(dir, ".git"))) {
        execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir, env })
        execFileSync("git", ["commit", "-q", "--allow-empty", "-m", "init"], { cwd: dir, env })
      }
      return dir
    },
    cleanup() {
      // AIR_KEEP_SANDBOX=1 keeps the test's repositories, logs and engine data for a look after a failure.
      if (process.env.AIR_KEEP_SANDBOX !== "1") rmSync(root, { recursive: true, force: true })
    },
  }
}

/** The database the pinned engine leaves on its first start, made once per machine and engine version (opencode.db and its WAL). */
function engineDatabase(sandboxEnv: NodeJS.ProcessEnv): string {
  const dir = join(tmpdir(), `air-engine-db-${Pin.engineVersion()}`)
  if (existsSync(join(dir, "opencode.db"))) return dir
  const work = mkdtempSync(join(tmpdir(), "air-engine-db-work-"))
  try {
    const env = { ...sandboxEnv, HOME: work, XDG_CONFIG_HOME: join(work, "config"), XDG_DATA_HOME: join(work, "data"), XDG_CACHE_HOME: join(work, "cache"), XDG_STATE_HOME: join(work, "state") }
    ConfigDirs.prepare(ConfigDirs.globalConfigDir(env))
    execFileSync(Paths.opencodeBinary(), ["debug", "config"], { cwd: work, env, stdio: "ignore", timeout: 120_000 })
    const made = join(work, "files")
    mkdirSync(made)
    for (const name of readdirSync(join(work, "data", "opencode")).filter((n) => n.startsWith("opencode.db"))) copyFileSync(join(work, "data", "opencode", name), join(made, name))
    try {
      renameSync(made, dir)
    } catch {
      // Another test file made it at the same moment: theirs serves.
    }
    return dir
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/** The bun that runs the aircoding CLI: on PATH, or the one ./start.sh installed into .tools/. */
export function bunBinary(): string {
  const local = join(Paths.repoRoot, ".tools", "node_modules", ".bin", "bun")
  try {
    return execFileSync("sh", ["-c", "command -v bun"], { encoding: "utf8" }).trim() || local
  } catch {
    return local
  }
}

export const aircodingBin = join(Paths.packageRoot, "bin", "aircoding.ts")
