import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdir, readdir, readFile, rm } from "node:fs/promises"
import { CMakeCache } from "../toolchain/cmake-cache.ts"
import { SlotRepair } from "./slot-repair.ts"
import path from "node:path"
import { z } from "zod"
import { git, gitTry } from "../git/git.ts"
import { Worktrees } from "../git/worktree.ts"
import { ResultKey } from "../results/key.ts"
import { ToolVersions } from "../results/versions.ts"
import { writeFileAtomic } from "../store/atomic.ts"
import { Serial } from "../store/serial.ts"
import { Toolchain } from "../toolchain/index.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * A build slot (issue 38 item 1): a detached checkout at a fixed path, `.air/local/slots/<id>`, whose build
 * directory is kept from one build to the next. Moving it to the next commit with git rewrites only the files
 * that differ, so only they get new timestamps and the build (configure included) is incremental; its fixed
 * path keeps CMake's cache valid, which names the source directory.
 *
 * Correctness first. Before each use the tree is reset to the commit exactly (tracked changes discarded,
 * every untracked and ignored file removed but the build directory); the build directory is dropped when
 * what made it changed (the build commands, the tools' versions, the compiler and flag variables, the path
 * map: `fingerprint`) or when the slot's last use never ended (a process killed mid-build may leave a
 * half-written cache), when its CMakeCache.txt is not the one the slot's last build left (another compiler, source
 * directory or configure options, set by hand: `cmake-cache.ts`). A slot whose checkout is missing or broken is
 * made again; one a git command left stuck (a lock file, a half-finished rebase or merge) is freed (`slot-repair.ts`).
 *
 * A slot holds no work: only a commit's tree and a cache of its build. The task's own worktree, branch and
 * recovery stay as they are; a slot can be deleted at any moment and costs only a full build.
 */
export namespace BuildSlot {
  export function dir(root: string): string {
    return AirPaths.slots(root)
  }

  const State = z
    .object({
      fingerprint: z.string(),
      busy: z.boolean(),
      commit: z.string(),
      /** What the build directory's CMakeCache.txt said when its last build ended (`CMakeCache.identity`). */
      cmake: z.record(z.string(), z.string()).optional(),
    })
    .strict()
  type State = z.infer<typeof State>

  export interface Taken {
    path: string
    /** What was done to make the slot right, for the gate's log ("build directory dropped: …"). */
    notes: string[]
  }

  /** What the build directory depends on beside the sources: a change drops it. */
  export async function fingerprint(rules: Toolchain.Rules, env: NodeJS.ProcessEnv): Promise<string> {
    const parts = {
      build: rules.build,
      tools: await ToolVersions.all(env),
      env: Object.fromEntries(ResultKey.BUILD_ENV.map((name) => [name, env[name] ?? null])),
      cache: { tool: rules.cache.tool, pathMap: rules.cache.pathMap ?? true },
      buildDir: rules.detected?.buildDir ?? Toolchain.BUILD_DIR,
    }
    return createHash("sha256").update(ResultKey.canonical(parts)).digest("hex")
  }

  const serial = new Serial()

  /**
   * Slot `id` with `commit` checked out exactly and its build directory kept when `print` (see `fingerprint`)
   * is the one it was built with. Marked busy until `release`.
   */
  export async function take(
    root: string,
    id: string,
    commit: string,
    print: string,
    buildDir: string = Toolchain.BUILD_DIR,
    env: NodeJS.ProcessEnv = process.env,
  ): Promise<Taken> {
    Worktrees.assertTaskId(id)
    const top = await Worktrees.repoRoot(root)
    return serial.run(top, async () => {
      const slot = path.join(dir(top), id)
      const notes: string[] = []
      if (!(await healthy(top, slot))) {
        if (existsSync(slot)) notes.push("the slot's checkout was missing or broken: made again")
        await Worktrees.dropDetached(top, slot)
        await mkdir(dir(top), { recursive: true })
        await git(top, ["worktree", "add", "--detach", slot, commit])
      } else notes.push(...(await SlotRepair.unstick(slot)))
      const before = await readState(top, id)
      const built = path.join(slot, buildDir)
      const drop = !existsSync(built)
        ? undefined
        : !before
          ? "no readable record of what built it"
          : before.busy
            ? "its last build never ended"
            : before.fingerprint !== print
              ? "the build commands, tools or flags changed"
              : CMakeCache.mismatch(await CMakeCache.identity(built), { sourceDir: slot, recorded: before.cmake, env })
      if (drop) {
        await emptyBuildDir(built)
        notes.push(`build directory dropped: ${drop}`)
      }
      await writeState(top, id, { fingerprint: print, busy: true, commit })
      // Only the files that differ are rewritten: the build directory's outputs stay newer than the rest.
      await git(slot, ["checkout", "--force", "--detach", "--quiet", commit])
      const cleaned = await git(slot, ["clean", "-ffdx", "-e", `/${buildDir}`])
      if (cleaned.trim()) notes.push(`files left by the last use removed: ${cleaned.trim().split("\n").length}`)
      const submodules = await Worktrees.checkoutSubmodules(top, slot)
      notes.push(...submodules)
      return { path: slot, notes }
    })
  }

  /**
   * The slot's use ended (its build finished, passed or failed): its build directory is kept for the next, with
   * what its CMakeCache.txt says now, so a hand-made change to it is seen at the next `take`.
   */
  export async function release(root: string, id: string, buildDir: string = Toolchain.BUILD_DIR): Promise<void> {
    const top = await Worktrees.repoRoot(root)
    await serial.run(top, async () => {
      const state = await readState(top, id)
      if (!state) return
      const cmake = await CMakeCache.identity(path.join(dir(top), id, buildDir))
      const { cmake: _old, ...rest } = state
      await writeState(top, id, { ...rest, busy: false, ...(cmake ? { cmake } : {}) })
    })
  }

  /**
   * Drops the slot's build directory while the slot is in use (the gates found the disk full: the space may be the
   * slot's own leftovers) and cleans its tree; the next build starts from an empty build directory.
   */
  export async function reset(root: string, id: string, buildDir: string = Toolchain.BUILD_DIR): Promise<string[]> {
    const top = await Worktrees.repoRoot(root)
    return serial.run(top, async () => {
      const slot = path.join(dir(top), id)
      await emptyBuildDir(path.join(slot, buildDir))
      const cleaned = await git(slot, ["clean", "-ffdx", "-e", `/${buildDir}`])
      return [`build directory dropped: the disk filled during the build`, ...(cleaned.trim() ? [`files removed: ${cleaned.trim().split("\n").length}`] : [])]
    })
  }

  /**
   * Removes what the build directory holds, then the directory. The directory itself may be a mount point (a
   * separate filesystem for builds): then it stays, empty.
   */
  async function emptyBuildDir(built: string): Promise<void> {
    const names = await readdir(built).catch(() => [] as string[])
    for (const name of names) await rm(path.join(built, name), { recursive: true, force: true })
    await rm(built, { recursive: true, force: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EBUSY") throw error
    })
  }

  /** Removes every slot: they are a run's cache, and a finished run leaves only the worktrees of unmerged work. */
  export async function dropAll(root: string): Promise<void> {
    const top = await Worktrees.repoRoot(root)
    await serial.run(top, async () => {
      const names = await readdir(dir(top)).catch(() => [] as string[])
      for (const name of names.filter((n) => !n.endsWith(".json"))) await Worktrees.dropDetached(top, path.join(dir(top), name))
      await rm(dir(top), { recursive: true, force: true })
    })
  }

  /** A registered worktree at `slot` that git can read. */
  async function healthy(top: string, slot: string): Promise<boolean> {
    if (!existsSync(path.join(slot, ".git"))) return false
    const listed = await git(top, ["worktree", "list", "--porcelain"])
    if (!listed.split("\n").some((line) => line === `worktree ${slot}`)) return false
    return (await gitTry(slot, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])).code === 0
  }

  function stateFile(top: string, id: string): string {
    return path.join(dir(top), `${id}.json`)
  }

  /** The slot's state; undefined when absent or unreadable (its build directory is then of unknown making). */
  async function readState(top: string, id: string): Promise<State | undefined> {
    const text = await readFile(stateFile(top, id), "utf8").catch(() => undefined)
    if (text === undefined) return undefined
    try {
      return State.parse(JSON.parse(text))
    } catch {
      return undefined
    }
  }

  async function writeState(top: string, id: string, state: State): Promise<void> {
    await writeFileAtomic(stateFile(top, id), JSON.stringify(state, null, 2) + "\n")
  }
}
