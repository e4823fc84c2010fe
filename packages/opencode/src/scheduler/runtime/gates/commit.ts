import { stat } from "node:fs/promises"
import path from "node:path"
import { Worktrees } from "../git/worktree.ts"
import type { Failure, Gate, GateContext } from "./gate.ts"
import { listSome } from "./text.ts"

/**
 * The work is committed on the task branch, in the task's worktree, with nothing left uncommitted: what is
 * built and tested next is exactly what would be merged. Not required (skipped) for kinds without a diff.
 */
export const commitGate = {
  id: "commit",
  route: "executor",
  async run(ctx: GateContext) {
    if (!ctx.requires.includes("diff")) return { ran: false, summary: `skipped: not required for a ${ctx.kind} task` }
    const failure = await check(ctx)
    return failure ? { ran: true, summary: failure.summary, failure } : { ran: true, summary: "committed on the task branch, worktree clean" }
  },
} as const satisfies Gate

async function check(ctx: GateContext): Promise<Failure | undefined> {
  const { label, worktree, taskId, base, root } = ctx
  const branch = `air/${taskId}`
  if (!(await isDir(worktree))) {
    return {
      summary: `no worktree at ${worktree}`,
      message: `${label}: the worktree ${worktree} does not exist, so there is nothing to check. The task's work must be committed on ${branch} in its worktree.`,
    }
  }
  if (!(await Worktrees.branchExists(root, taskId))) {
    return {
      summary: `no branch ${branch}`,
      message: `${label}: the task branch ${branch} does not exist, so there is nothing to check. The task's work must be committed on ${branch} in its worktree.`,
    }
  }
  const ahead = await Worktrees.commitsAhead(root, taskId, base)
  if (ahead === 0) {
    return {
      summary: `no commit on ${branch} ahead of ${base}`,
      message:
        `${label}: ${branch} has no commit ahead of ${base}, so there is no work to check. Work counts only ` +
        `once it is committed on the task branch: in ${worktree}, git add the files you changed, git commit, ` +
        `then report again.`,
    }
  }
  const head = await Worktrees.headBranch(worktree)
  if (head !== branch) {
    return {
      summary: `the worktree is on ${head ?? "a detached HEAD"}, not ${branch}`,
      message:
        `${label}: the worktree ${worktree} is on ${head ?? "a detached HEAD"}, not on the task branch ` +
        `${branch}, so what would be built is not what would be merged. Put the work on ${branch} ` +
        `(git switch ${branch}, then commit or cherry-pick it there) and report again.`,
    }
  }
  const dirty = await Worktrees.uncommittedFiles(worktree, { untracked: false })
  if (dirty.length > 0) {
    return {
      summary: `uncommitted changes: ${listSome(dirty, 5)}`,
      message:
        `${label}: the worktree has uncommitted changes: ${listSome(dirty, 10)}. Uncommitted work is not evidence ` +
        `(the build and tests would check files the merge would not carry). In ${worktree}, commit them on ` +
        `${branch} or discard them, then report again.`,
    }
  }
  const loose = untrackedSources(await Worktrees.untrackedFiles(worktree))
  if (loose.length > 0) {
    return {
      summary: `untracked source files: ${listSome(loose, 5)}`,
      message:
        `${label}: the worktree has untracked source files: ${listSome(loose, 10)}. The build would use them but ` +
        `the merge would not carry them, so uncommitted work is not evidence. In ${worktree}, git add and ` +
        `commit them on ${branch} (or delete them), then report again.`,
    }
  }
  return undefined
}

export const C_CPP_EXTENSIONS = [".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"] as const

export function isCppFile(file: string): boolean {
  return (C_CPP_EXTENSIONS as readonly string[]).includes(path.extname(file).toLowerCase())
}

/**
 * The untracked files that matter: C/C++ sources and headers and CMake files, outside any CMake build tree
 * (a directory holding a CMakeCache.txt, whose generated sources are build output). Notes, logs and binaries
 * are left alone.
 */
export function untrackedSources(untracked: string[]): string[] {
  const buildTrees = untracked
    .filter((file) => file === "CMakeCache.txt" || file.endsWith("/CMakeCache.txt"))
    .map((file) => file.slice(0, -"CMakeCache.txt".length))
  return untracked.filter((file) => {
    if (buildTrees.some((tree) => file.startsWith(tree))) return false
    const name = path.posix.basename(file)
    return isCppFile(file) || name === "CMakeLists.txt" || name.endsWith(".cmake")
  })
}

export async function isDir(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory()
  } catch {
    return false
  }
}
