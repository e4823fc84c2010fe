import { describe, expect, it } from "vitest"
import { existsSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { SandboxEnvironment } from "../../src/scheduler/runtime/sandbox/environment"

describe("SandboxEnvironment.reduce", () => {
  it("keeps what builds need and drops keys, tokens and the engine's variables", () => {
    const env = SandboxEnvironment.reduce({
      PATH: "/usr/bin",
      HOME: "/h",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      CC: "gcc",
      CXX: "g++",
      CCACHE_DIR: "/c",
      CMAKE_BUILD_PARALLEL_LEVEL: "2",
      ANTHROPIC_API_KEY: "x",
      OPENAI_API_KEY: "x",
      OPENCODE_SERVER_PASSWORD: "x",
      AIRCODING_LANGUAGE: "en",
      GITHUB_TOKEN: "x",
      CMAKE_GITHUB_TOKEN: "x",
      AWS_SECRET_ACCESS_KEY: "x",
      SSH_AUTH_SOCK: "/s",
      GIT_AUTHOR_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@b",
    })
    expect(Object.keys(env).sort()).toEqual(["CC", "CCACHE_DIR", "CMAKE_BUILD_PARALLEL_LEVEL", "CXX", "GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL", "HOME", "LANG", "LC_ALL", "PATH"])
  })

  it("knows .env files from their documentation", () => {
    expect([".env", ".env.local", ".env.production"].every(SandboxEnvironment.isEnvFile)).toBe(true)
    expect([".env.example", "env", ".env.sample", "environment.cpp"].some(SandboxEnvironment.isEnvFile)).toBe(false)
  })
})

describe("the analysers' caches in the sandbox", () => {
  it("passes Go's and Cargo's variables, never a token among them", () => {
    const env = SandboxEnvironment.reduce({ GOCACHE: "/t/g", GOPROXY: "off", CARGO_TARGET_DIR: "/t/c", CARGO_NET_OFFLINE: "true", RUSTUP_HOME: "/r", CARGO_REGISTRIES_X_TOKEN: "s", GOOGLE_API_KEY: "k" })
    expect(env).toEqual({ GOCACHE: "/t/g", GOPROXY: "off", CARGO_TARGET_DIR: "/t/c", CARGO_NET_OFFLINE: "true", RUSTUP_HOME: "/r", PATH: "/usr/local/bin:/usr/bin:/bin" })
  })

  it("binds writable only AirCoding's own cache directories under the temp dir, real ones, made first", () => {
    const tmp = tmpdir()
    const own = join(tmp, "aircoding-go", `test-${process.pid}`)
    const policy = Sandbox.plan({ worktree: tmp, env: { PATH: "/usr/bin", HOME: "/nonexistent-home", GOCACHE: own, STATICCHECK_CACHE: "/etc/aircoding-go", CARGO_TARGET_DIR: join(tmp, "aircoding-cargo", "..", "..", "etc") }, git: false })
    expect(policy.writable).toContain(own)
    expect(existsSync(own)).toBe(true)
    expect(policy.writable.some((dir) => dir.startsWith("/etc"))).toBe(false)
    expect(SandboxEnvironment.isOwnCache(join(tmp, "aircoding-cargo-evil"), tmp)).toBe(false)
    rmSync(own, { recursive: true, force: true })
  })
})
