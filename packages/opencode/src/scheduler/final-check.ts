import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { writeFileAtomic } from "./atomic"
import { Toolchain } from "./toolchain"

/**
 * After the last merge, the Scheduler builds and tests the integration branch itself: each task passed
 * its gates on its own branch, and only this run shows that together they still build and pass.
 * Evidence goes to .air/local/evidence/_final/.
 */
export namespace FinalCheck {
  export type Result = { passed: boolean; summary: string; evidenceDir: string; commands: { command: string; code: number }[] }

  export function dir(root: string): string {
    return join(root, ".air", "local", "evidence", "_final")
  }

  function sh(command: string, cwd: string, timeoutMs: number): Promise<{ code: number; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(command, { cwd, shell: true, stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      child.stdout.on("data", (d) => (output += d))
      child.stderr.on("data", (d) => (output += d))
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
      child.on("close", (code) => {
        clearTimeout(timer)
        resolve({ code: code ?? 1, output })
      })
      child.on("error", (err) => {
        clearTimeout(timer)
        resolve({ code: 127, output: String(err) })
      })
    })
  }

  export async function run(root: string): Promise<Result> {
    const { rules, note } = await Toolchain.load(root)
    const out = dir(root)
    const commands: Result["commands"] = []
    let log = `# ${note}\n`
    for (const command of [...rules.build, ...rules.test]) {
      const r = await sh(command, root, rules.timeoutMs)
      commands.push({ command, code: r.code })
      log += `$ ${command}\n${r.output}\n# exit ${r.code}\n`
      if (r.code !== 0) break
    }
    const passed = commands.length > 0 && commands.every((c) => c.code === 0)
    const summary = commands.length === 0
      ? `no build or test command to run on the integration branch (${note})`
      : passed
        ? `integration branch builds and its tests pass (${commands.length} command(s))`
        : `integration branch FAILS: \`${commands.at(-1)!.command}\` exited ${commands.at(-1)!.code}; see ${join(out, "final.log")}`
    const result: Result = { passed, summary, evidenceDir: out, commands }
    await writeFileAtomic(join(out, "final.log"), log)
    await writeFileAtomic(join(out, "result.json"), JSON.stringify(result, null, 2))
    return result
  }

  export function read(root: string): Result | undefined {
    const file = join(dir(root), "result.json")
    if (!existsSync(file)) return undefined
    try {
      return JSON.parse(readFileSync(file, "utf8"))
    } catch {
      return undefined
    }
  }
}
