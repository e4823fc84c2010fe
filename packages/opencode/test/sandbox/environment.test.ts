import { describe, expect, it } from "vitest"
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
