import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Paths } from "../engine"
import { headlessRun, printSummary } from "./run"
import { UsageError, Ui } from "./ui"

const REQUIREMENT =
  "Extend calc with calc::mul(a, b) and calc::avg3(a, b, c) (integer average of three values), and cover both with tests."

/** A git identity for the demo's own commits when the machine has none (a fresh machine often has none). */
function gitIdentity(dir: string): Record<string, string> {
  const has = (key: string) => {
    try {
      return execFileSync("git", ["config", key], { cwd: dir, encoding: "utf8" }).trim().length > 0
    } catch {
      return false
    }
  }
  if (has("user.name") && has("user.email")) return {}
  return {
    GIT_AUTHOR_NAME: "AirCoding demo",
    GIT_AUTHOR_EMAIL: "demo@aircoding.invalid",
    GIT_COMMITTER_NAME: "AirCoding demo",
    GIT_COMMITTER_EMAIL: "demo@aircoding.invalid",
  }
}

/** The sample as a fresh repository on branch main; returns the identity its commits need. */
function prepareSample(dir: string): Record<string, string> {
  cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir, stdio: "ignore" })
  const identity = gitIdentity(dir)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: { ...process.env, ...identity }, stdio: "ignore" })
  git("add", "-A")
  git("commit", "-q", "-m", "cpp-calc sample")
  return identity
}

export async function demo(opts: { json: boolean; keep: boolean; dir?: string }): Promise<number> {
  let dir: string
  if (opts.dir) {
    dir = resolve(opts.dir)
    if (existsSync(dir) && readdirSync(dir).length > 0) throw new UsageError(`--dir must be a new or empty directory: ${dir}`)
  } else dir = mkdtempSync(join(tmpdir(), "aircoding-demo-"))
  const identity = prepareSample(dir)
  if (!opts.json) {
    process.stderr.write(Ui.bold("AirCoding demo") + ` — offline, scripted model, sample copied to ${dir}\n`)
    process.stderr.write(`Requirement: ${REQUIREMENT}\n\n`)
  }
  const outcome = await headlessRun(dir, REQUIREMENT, {
    yes: true,
    scripted: join(Paths.scenarios, "demo.json"),
    extra: identity,
  })
  printSummary(outcome, opts.json)
  if (!opts.json) {
    if (outcome.exitCode === 0) {
      const log = execFileSync("git", ["log", "--oneline", "--decorate", "-8"], { cwd: dir, encoding: "utf8" })
      process.stdout.write(`\nIntegration branch (main):\n${log}`)
    }
    process.stdout.write(opts.keep || opts.dir ? `\nThe demo repository is kept at ${dir}\n` : "")
  }
  if (!opts.keep && !opts.dir) rmSync(dir, { recursive: true, force: true })
  return outcome.exitCode
}
