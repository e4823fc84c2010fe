import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Paths } from "../engine"
import { git, gitTry } from "../scheduler/runtime/git/git.ts"
import { CompilerCache } from "../scheduler/runtime/toolchain/cache.ts"
import { headlessRun, printSummary, type RunOutcome } from "./run"
import { UsageError, Ui } from "./ui"

const REQUIREMENT =
  "Extend calc with calc::mul(a, b) and calc::avg3(a, b, c) (integer average of three values), and cover both with tests."

/** A git identity for the demo's own commits when the machine has none (a fresh machine often has none). */
async function gitIdentity(dir: string): Promise<Record<string, string>> {
  const has = async (key: string) => (await gitTry(dir, ["config", key])).stdout.trim().length > 0
  if ((await has("user.name")) && (await has("user.email"))) return {}
  return {
    GIT_AUTHOR_NAME: "AirCoding demo",
    GIT_AUTHOR_EMAIL: "demo@aircoding.invalid",
    GIT_COMMITTER_NAME: "AirCoding demo",
    GIT_COMMITTER_EMAIL: "demo@aircoding.invalid",
  }
}

/** The sample as a fresh repository on branch main; returns the identity its commits need. */
async function prepareSample(dir: string): Promise<Record<string, string>> {
  cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
  await git(dir, ["init", "-q", "-b", "main"])
  const identity = await gitIdentity(dir)
  // The same identity as the run's commits (given to it in its environment), here as git's own settings.
  const config = identity.GIT_AUTHOR_NAME ? [`user.name=${identity.GIT_AUTHOR_NAME}`, `user.email=${identity.GIT_AUTHOR_EMAIL}`] : []
  await git(dir, ["add", "-A"])
  await git(dir, ["commit", "-q", "-m", "cpp-calc sample"], { config })
  return identity
}

/** The tools the demo's gates drive; without one of them no task could pass, so the demo does not start. */
const DEMO_TOOLS: { name: string; found: () => boolean; apt: string; brew?: string }[] = [
  { name: "git", found: () => onPath("git"), apt: "git", brew: "git" },
  { name: "cmake", found: () => onPath("cmake") && onPath("ctest"), apt: "cmake", brew: "cmake" },
  { name: "a C++ compiler", found: () => onPath("c++") || onPath("g++") || onPath("clang++"), apt: "g++" },
  { name: "cppcheck", found: () => onPath("cppcheck"), apt: "cppcheck", brew: "cppcheck" },
]

function onPath(name: string): boolean {
  return CompilerCache.onPath(name) !== undefined
}

/** The one command that installs what is missing, or undefined when nothing is. */
function missingToolsCommand(): { missing: string[]; command: string } | undefined {
  const missing = DEMO_TOOLS.filter((tool) => !tool.found())
  if (missing.length === 0) return undefined
  const brew = missing.flatMap((tool) => (tool.brew ? [tool.brew] : []))
  const command =
    process.platform === "darwin"
      ? [...(missing.some((tool) => !tool.brew) ? ["xcode-select --install"] : []), ...(brew.length > 0 ? [`brew install ${brew.join(" ")}`] : [])].join(" && ")
      : `sudo apt-get install -y ${missing.map((t) => t.apt).join(" ")}`
  return { missing: missing.map((t) => t.name), command }
}

/** The demo's last words, from what the run did (never a canned success line). */
export function closingWords(outcome: RunOutcome): string {
  const s = outcome.summary
  const merged = s.tasks.filter((t) => t.state === "merged").length
  const total = s.tasks.length
  const final = s.final ? (s.final.passed ? "the integration branch builds and its tests pass" : "the final check FAILED") : "no final check ran"
  if (outcome.exitCode === 0 && total > 0 && merged === total) return `Demo finished: ${merged} of ${total} task(s) merged; ${final}.`
  const stuck = s.tasks.filter((t) => t.state !== "merged").map((t) => `${t.id} ${t.state}`)
  return (
    `Demo did not finish: ${merged} of ${total} task(s) merged` +
    `${stuck.length > 0 ? ` (${stuck.join(", ")})` : ""}; ${final}; run status ${s.status}` +
    `${s.errors.length > 0 ? `; first error: ${s.errors[0]}` : ""}.`
  )
}

export async function demo(opts: { json: boolean; keep: boolean; dir?: string }): Promise<number> {
  const missing = missingToolsCommand()
  if (missing) {
    process.stderr.write(
      Ui.red("aircoding demo: ") +
        `${missing.missing.join(", ")} ${missing.missing.length === 1 ? "is" : "are"} not installed, and the demo's gates need ` +
        `${missing.missing.length === 1 ? "it" : "them"}: no task could pass, so the demo does not start.
Install with:
  ${missing.command}
` +
        `(or run ./start.sh demo, which installs them when it can)
`,
    )
    return 1
  }
  let dir: string
  if (opts.dir) {
    dir = resolve(opts.dir)
    if (existsSync(dir) && readdirSync(dir).length > 0) throw new UsageError(`--dir must be a new or empty directory: ${dir}`)
  } else dir = mkdtempSync(join(tmpdir(), "aircoding-demo-"))
  const identity = await prepareSample(dir)
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
      const log = await git(dir, ["log", "--oneline", "--decorate", "-8"])
      process.stdout.write(`\nIntegration branch (main):\n${log}`)
    }
    process.stdout.write(`\n${outcome.exitCode === 0 ? Ui.green(closingWords(outcome)) : Ui.red(closingWords(outcome))}\n`)
    process.stdout.write(opts.keep || opts.dir ? `\nThe demo repository is kept at ${dir}\n` : "")
  }
  if (!opts.keep && !opts.dir) rmSync(dir, { recursive: true, force: true })
  return outcome.exitCode
}
