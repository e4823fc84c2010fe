import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { openCodeLike, system, user } from "./helpers.ts"

// The CLI is a bun script (#!/usr/bin/env bun); these tests need bun on PATH.
const BUN = spawnSync("bun", ["--version"]).status === 0 ? "bun" : undefined
const CLI = resolve(import.meta.dirname, "../bin/scripted-model.ts")
const dir = mkdtempSync(join(tmpdir(), "scripted-cli-"))

describe.skipIf(!BUN)("scripted-model CLI (bun)", () => {
  it("explains itself on --help", () => {
    const r = spawnSync(BUN!, [CLI, "--help"], { encoding: "utf8" })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("--scenario FILE")
    expect(r.stdout).toContain("--log FILE")
  })

  it("exits 2 naming the file, the JSON path and the fix for a bad scenario", () => {
    const path = join(dir, "bad.json")
    writeFileSync(path, JSON.stringify({ name: "bad", scripts: [{ agent: "a", steps: [{ tool: "x", text: "y" }] }] }))
    const r = spawnSync(BUN!, [CLI, "--scenario", path], { encoding: "utf8" })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain(path)
    expect(r.stderr).toContain("$.scripts[0].steps[0]")
    expect(r.stderr).toContain("split it into separate steps")
  })

  it("exits 2 on missing or unknown arguments", () => {
    expect(spawnSync(BUN!, [CLI], { encoding: "utf8" }).status).toBe(2)
    const r = spawnSync(BUN!, [CLI, "--scenario", "x.json", "--prot", "1"], { encoding: "utf8" })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain("--prot")
  })

  it("serves, logs, prints failures to stderr and stops on SIGTERM", async () => {
    const scenarioPath = join(dir, "ok.json")
    const logPath = join(dir, "requests.jsonl")
    writeFileSync(scenarioPath, JSON.stringify({ name: "ok", scripts: [{ agent: "a", steps: [{ text: "hello from the CLI" }] }] }))
    const child = spawn(BUN!, [CLI, "--scenario", scenarioPath, "--port", "0", "--log", logPath])
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
    try {
      const url = await new Promise<string>((ok, fail) => {
        let out = ""
        child.stdout.on("data", (d) => {
          out += d
          const m = /scripted model listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(out)
          if (m) ok(m[1]!)
        })
        child.on("exit", () => fail(new Error(`CLI exited before listening: ${stderr}`)))
      })
      const ok = await fetch(`${url}/chat/completions`, { method: "POST", body: JSON.stringify({ ...openCodeLike([system("a"), user("hi")]), stream: false }) })
      expect(((await ok.json()) as any).choices[0].message.content).toBe("hello from the CLI")
      const bad = await fetch(`${url}/chat/completions`, { method: "POST", body: JSON.stringify({ messages: [system("zed"), user("hi")] }) })
      expect(bad.status).toBe(400)
      await new Promise((r) => setTimeout(r, 200))
      expect(stderr).toContain('no script for agent "zed"')
    } finally {
      child.kill("SIGTERM")
    }
    expect(await exited).toBe(0)
    expect(readFileSync(logPath, "utf8").trim().split("\n").map((l) => JSON.parse(l).agent)).toEqual(["a", "zed"])
  })
})
