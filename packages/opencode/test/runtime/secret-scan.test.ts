import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { SecretScan } from "../../src/scheduler/runtime/gates/secret-scan"

// Made-up credentials in the shapes the scanners know; none of them is real.
const AWS_SECRET = `aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9h3Kq2Lm"`
const GITHUB_TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function repo(files: Record<string, string>): { dir: string; git: (...args: string[]) => string } {
  const dir = mkdtempSync(join(tmpdir(), "air-secrets-"))
  dirs.push(dir)
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x.invalid", ...args], { cwd: dir, encoding: "utf8" })
  git("init", "-q", "-b", "main")
  for (const [path, text] of Object.entries(files)) write(dir, path, text)
  git("add", "-A")
  git("commit", "-q", "-m", "base")
  return { dir, git }
}

function write(dir: string, path: string, text: string) {
  execFileSync("mkdir", ["-p", join(dir, path, "..")])
  writeFileSync(join(dir, path), text)
}

describe("secret scan of a task's change", () => {
  it("refuses a credential the change adds and names the file, line and rule, never the secret", async () => {
    const { dir, git } = repo({ "src/a.cpp": "int a() { return 1; }\n" })
    write(dir, "src/a.cpp", `int a() { return 1; }\n// ${AWS_SECRET}\n`)
    const findings = await SecretScan.scanPatch(dir, git("diff", "-U0"))
    expect(findings).toHaveLength(1)
    expect(findings[0]).toMatchObject({ file: "src/a.cpp", line: 2, rule: "aws" })
    expect(SecretScan.describe(findings)).not.toContain("wJalrXUtnFEMI")
  })

  it("does not blame the change for a credential already on the integration branch", async () => {
    const { dir, git } = repo({ "config/legacy.ini": `${AWS_SECRET}\n` })
    write(dir, "config/legacy.ini", `# header added by the task\n${AWS_SECRET}\n`)
    expect(await SecretScan.scanPatch(dir, git("diff", "-U0"))).toEqual([])
  })

  it("finds a token in a file the change creates", async () => {
    const { dir, git } = repo({ "README.md": "x\n" })
    write(dir, "tools/deploy.sh", `#!/bin/sh\nTOKEN=${GITHUB_TOKEN}\n`)
    git("add", "-A")
    const findings = await SecretScan.scanPatch(dir, git("diff", "--cached", "-U0"))
    expect(findings.map((f) => [f.file, f.line, f.rule])).toEqual([["tools/deploy.sh", 2, "github"]])
  })

  it("lets the allowlist skip a fixture path, a rule or a literal", async () => {
    const { dir, git } = repo({ "README.md": "x\n" })
    write(dir, "test/fixtures/creds.txt", `${AWS_SECRET}\n`)
    write(dir, "src/b.cpp", `// ${GITHUB_TOKEN}\n`)
    git("add", "-A")
    const patch = git("diff", "--cached", "-U0")
    expect((await SecretScan.scanPatch(dir, patch)).map((f) => f.file)).toEqual(["src/b.cpp", "test/fixtures/creds.txt"])
    const allow = SecretScan.parseAllow("# fixtures are fake\npath:test/fixtures/**\nrule:github\n")
    expect(await SecretScan.scanPatch(dir, patch, allow)).toEqual([])
    const literal = SecretScan.parseAllow(`${GITHUB_TOKEN}\n`)
    expect((await SecretScan.scanPatch(dir, patch, literal)).map((f) => f.file)).toEqual(["test/fixtures/creds.txt"])
  })

  it("reads the added line numbers of every hunk", () => {
    const patch = [
      "diff --git a/x.cpp b/x.cpp",
      "--- a/x.cpp",
      "+++ b/x.cpp",
      "@@ -1,0 +2,2 @@",
      "+one",
      "+two",
      "@@ -10 +12 @@",
      "-old",
      "+new",
      "diff --git a/gone.cpp b/gone.cpp",
      "--- a/gone.cpp",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
    ].join("\n")
    const added = SecretScan.addedLines(patch)
    expect([...added.keys()]).toEqual(["x.cpp"])
    expect([...added.get("x.cpp")!]).toEqual([2, 3, 12])
  })
})
