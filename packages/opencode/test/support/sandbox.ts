import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConfigDirs, Paths } from "../../src/engine"

/**
 * A throw-away machine for one test: HOME and every XDG dir inside a temp folder, OpenCode kept
 * offline, a git identity that needs no global config. Nothing a test does leaks into the real HOME.
 */
export type Sandbox = { root: string; env: NodeJS.ProcessEnv; project(name?: string): string; cleanup(): void }

export function makeSandbox(prefix = "air-test-"): Sandbox {
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
      rmSync(root, { recursive: true, force: true })
    },
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
