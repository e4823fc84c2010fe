import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"

/**
 * Small real C++ repositories for tests: a CMake + CTest library (include/calc.h, src/calc.cpp,
 * test/calc_test.cpp) with one commit on `main`, in a temp dir.
 *
 * The repository carries its own identity in `.git/config` (shared by its worktrees), so commits work
 * with any HOME and no global config is touched.
 */

export const TEST_IDENTITY = { name: "Air Test", email: "air-test@example.invalid" } as const

export const CALC_H = `#pragma once

int add(int a, int b);
int sub(int a, int b);
`

export const CALC_CPP = `#include "calc.h"

int add(int a, int b) {
  return a + b;
}

int sub(int a, int b) {
  return a - b;
}
`

export const CALC_TEST_CPP = `#include "calc.h"
#include <cstdio>

static int failures = 0;

static void check(const char* what, int got, int expected) {
  if (got != expected) {
    std::printf("FAIL: %s: expected %d, got %d\\n", what, expected, got);
    failures++;
  }
}

int main() {
  check("add(2, 3)", add(2, 3), 5);
  check("sub(5, 3)", sub(5, 3), 2);
  if (failures == 0) std::printf("all checks passed\\n");
  return failures == 0 ? 0 : 1;
}
`

export const CMAKELISTS = `cmake_minimum_required(VERSION 3.16)
project(calc CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)

add_library(calc src/calc.cpp)
target_include_directories(calc PUBLIC include)

enable_testing()
add_executable(calc_test test/calc_test.cpp)
target_link_libraries(calc_test calc)
add_test(NAME calc_test COMMAND calc_test)
`

export const DEFAULT_FILES: Readonly<Record<string, string>> = {
  "CMakeLists.txt": CMAKELISTS,
  "include/calc.h": CALC_H,
  "src/calc.cpp": CALC_CPP,
  "test/calc_test.cpp": CALC_TEST_CPP,
}

/** A working tree (the repository root or one of its worktrees) seen from a test. */
export interface Workspace {
  /** Absolute path of the working tree. */
  readonly root: string
  /** Runs git there; resolves with stdout, rejects with git's stderr on a non-zero exit. */
  git(args: string[]): Promise<string>
  /** Writes a file (parents created); path relative to the working tree. */
  write(file: string, content: string): Promise<void>
  read(file: string): Promise<string>
  /** Stages every change (`git add -A`) and commits; returns the new commit's sha. */
  commitAll(message: string): Promise<string>
}

export interface CppRepo extends Workspace {
  /** The same helpers for another working tree of this repository (a task worktree). */
  at(dir: string): Workspace
  /** Removes the temp dir. */
  cleanup(): Promise<void>
}

export interface CppRepoOptions {
  /** Files to add to (string) or drop from (null) the default project before the first commit. */
  files?: Record<string, string | null>
  /** Start from an empty tree instead of the calc project. */
  empty?: boolean
  /** Name of the first branch; default `main`. */
  branch?: string
}

export async function createCppRepo(options: CppRepoOptions = {}): Promise<CppRepo> {
  const root = await mkdtemp(path.join(tmpdir(), "air-cpp-"))
  const files: Record<string, string> = options.empty ? {} : { ...DEFAULT_FILES }
  for (const [file, content] of Object.entries(options.files ?? {})) {
    if (content === null) delete files[file]
    else files[file] = content
  }
  const main = workspace(root)
  await main.git(["init", "--quiet", "--initial-branch", options.branch ?? "main"])
  await main.git(["config", "user.name", TEST_IDENTITY.name])
  await main.git(["config", "user.email", TEST_IDENTITY.email])
  await main.git(["config", "commit.gpgsign", "false"])
  await main.git(["config", "tag.gpgsign", "false"])
  for (const [file, content] of Object.entries(files)) await main.write(file, content)
  await main.git(["add", "-A"])
  await main.git(["commit", "--quiet", "--allow-empty", "-m", "initial calc library"])
  return {
    ...main,
    at: workspace,
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
}

export function workspace(root: string): Workspace {
  const ws: Workspace = {
    root,
    git: (args) => runGit(root, args),
    async write(file, content) {
      const target = path.join(root, file)
      await mkdir(path.dirname(target), { recursive: true })
      await writeFile(target, content)
    },
    read: (file) => readFile(path.join(root, file), "utf8"),
    async commitAll(message) {
      await runGit(root, ["add", "-A"])
      await runGit(root, ["commit", "--quiet", "-m", message])
      return (await runGit(root, ["rev-parse", "HEAD"])).trim()
    },
  }
  return ws
}

function runGit(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args.join(" ")} (in ${cwd}) failed: ${stderr || error.message}`))
      else resolve(stdout)
    })
  })
}

/** A test that fails before any task: the old bug a baseline finds on the integration branch. */
export const LEGACY_TEST_CPP = `#include <cstdio>
int main() { std::puts("legacy: expected 3, got 4"); return 1; }
`

/**
 * The calc project plus `legacy_test`, a CTest test that already fails on the integration branch (what
 * the baseline's tests are about). `cmake`: more lines for CMakeLists.txt; `calc`: another src/calc.cpp.
 */
export function legacyFailureFiles(options: { cmake?: string; calc?: string } = {}): Record<string, string> {
  return {
    ...DEFAULT_FILES,
    // 3.19: test names with any character in them (CMP0110), as the baseline's JUnit reader is tested with.
    "CMakeLists.txt": `${CMAKELISTS.replace("VERSION 3.16", "VERSION 3.19")}add_executable(legacy_test test/legacy_test.cpp)\nadd_test(NAME legacy_test COMMAND legacy_test)\n${options.cmake ?? ""}`,
    ...(options.calc !== undefined ? { "src/calc.cpp": options.calc } : {}),
    "test/legacy_test.cpp": LEGACY_TEST_CPP,
  }
}
