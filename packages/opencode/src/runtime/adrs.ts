import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

/** The decisions recorded under .air/shared/plan/adr, as one line each ("ADR-1: title (status)"), in id order. */
export namespace Adrs {
  export function list(root: string): string[] {
    const dir = join(root, ".air", "shared", "plan", "adr")
    if (!existsSync(dir)) return []
    const files = readdirSync(dir).filter((f) => /^ADR-\d+\.md$/.test(f))
    files.sort((a, b) => Number(a.slice(4, -3)) - Number(b.slice(4, -3)))
    return files.map((f) => {
      const text = readFileSync(join(dir, f), "utf8")
      const title = /^# (.+)$/m.exec(text)?.[1] ?? f.slice(0, -3)
      const status = /^Status: (\S+)/m.exec(text)?.[1]
      return status ? `${title} (${status})` : title
    })
  }
}
