import { mkdtemp, rm, symlink } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { PathMap } from "../../src/scheduler/runtime/toolchain/path-map.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"

/** The flags that keep the worktree's path out of build outputs, with the real compilers (g++, gcc). */
describe("the worktree's path mapped out of build outputs", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "air-path-map-"))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test("CFLAGS and CXXFLAGS carry the map after the person's own flags; through a symlink both spellings are mapped", async () => {
    const env = { ...process.env, CC: "gcc", CXX: "g++", CFLAGS: "", CXXFLAGS: " -O1 " }
    expect(await PathMap.env(dir, env)).toEqual({ CFLAGS: `-ffile-prefix-map=${dir}=.`, CXXFLAGS: `-O1 -ffile-prefix-map=${dir}=.` })
    const link = path.join(dir, "link")
    await symlink(dir, link)
    expect((await PathMap.env(link, env)).CXXFLAGS).toBe(`-O1 -ffile-prefix-map=${link}=. -ffile-prefix-map=${dir}=.`)
  })

  test("a compiler that refuses the option, or a path with a space, gets no flags: the build goes on as before", async () => {
    // `false` stands for a compiler older than GCC 8 / Clang 10: it exits non-zero on the probe.
    expect(await PathMap.env(dir, { ...process.env, CC: "false", CXX: "g++" })).toEqual({ CXXFLAGS: `-ffile-prefix-map=${dir}=.` })
    expect(await PathMap.env(path.join(dir, "a b"), { ...process.env, CC: "gcc", CXX: "g++" })).toEqual({})
  })

  test("the gates' environment has the map unless cache.pathMap is false", async () => {
    const rules = Toolchain.Rules.parse({ schemaVersion: 1, cache: { tool: "none" } })
    const on = await Toolchain.commandEnv(rules, { root: dir, worktree: dir }, { ...process.env, CXX: "g++", CXXFLAGS: "" })
    expect(on.CXXFLAGS).toBe(`-ffile-prefix-map=${dir}=.`)
    const off = await Toolchain.commandEnv({ ...rules, cache: { ...rules.cache, pathMap: false } }, { root: dir, worktree: dir }, { ...process.env, CXX: "g++", CXXFLAGS: "-O2" })
    expect(off.CXXFLAGS).toBe("-O2")
  })
})
