import { describe, expect, test } from "vitest"
import { CompilerCache } from "../../src/scheduler/runtime/toolchain/cache.ts"

const settings: CompilerCache.Settings = { tool: "ccache", dir: ".air/local/ccache", maxSize: "2G" }

describe("the compiler cache's environment", () => {
  test("one cache per project, base_dir at the project root, hash_dir off, the size limit and this build's stats log", () => {
    const env = CompilerCache.env(settings, { root: "/p", worktree: "/p/.air/local/worktrees/T-1", statsLog: "/p/e/ccache-stats.log" }, process.env)
    expect(env).toEqual({
      CMAKE_C_COMPILER_LAUNCHER: "ccache",
      CMAKE_CXX_COMPILER_LAUNCHER: "ccache",
      CCACHE_DIR: "/p/.air/local/ccache",
      CCACHE_BASEDIR: "/p",
      CCACHE_NOHASHDIR: "1",
      CCACHE_MAXSIZE: "2G",
      CCACHE_STATSLOG: "/p/e/ccache-stats.log",
    })
    // A launcher the user chose wins; remote storage is passed on.
    const mine = CompilerCache.env({ ...settings, remoteStorage: "redis://cache:6379" }, { root: "/p", worktree: "/p" }, { ...process.env, CMAKE_CXX_COMPILER_LAUNCHER: "distcc" })
    expect(mine.CMAKE_CXX_COMPILER_LAUNCHER).toBeUndefined()
    expect(mine.CCACHE_REMOTE_STORAGE).toBe("redis://cache:6379")
  })

  test("off when turned off, or when the tool is not installed", () => {
    expect(CompilerCache.env({ ...settings, tool: "none" }, { root: "/p", worktree: "/p" })).toEqual({})
    expect(CompilerCache.env({ ...settings, tool: "auto" }, { root: "/p", worktree: "/p" }, { PATH: "/nonexistent" })).toEqual({})
    expect(CompilerCache.tool({ ...settings, tool: "sccache" }, { PATH: "/nonexistent" })).toBeUndefined()
  })

  test("a build's hit rate comes from its own stats log", () => {
    const log = [
      "# /p/a.cpp", "direct_cache_hit", "local_storage_hit",
      "# /p/b.cpp", "preprocessed_cache_hit",
      "# /p/c.cpp", "cache_miss", "direct_cache_miss",
      "# /p/link", "called_for_link",
    ].join("\n") + "\n"
    const stats = CompilerCache.parseStats(log)
    expect(stats).toEqual({ tool: "ccache", hits: 2, misses: 1, uncacheable: 1, rate: 2 / 3 })
    expect(CompilerCache.describe(stats)).toBe("ccache 2/3 hits (67%)")
    expect(CompilerCache.parseStats("")).toEqual({ tool: "ccache", hits: 0, misses: 0, uncacheable: 0 })
  })
})
