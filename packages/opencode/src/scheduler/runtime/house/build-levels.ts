import { z } from "zod"

/**
 * The log level a build compiles in, read from the build itself: the values of the library's level definition
 * (`-DSPDLOG_ACTIVE_LEVEL=…`) in a configure's compile_commands.json. Pure: the file's text in, the values out.
 */
export namespace BuildLevels {
  const Entry = z.object({ file: z.string(), command: z.string().optional(), arguments: z.array(z.string()).optional() }).loose()
  const Database = z.array(Entry)

  /** The distinct values of `define` over every compile command, sorted; "(unset)" for a command without it. */
  export function values(compileCommands: string, define: string): string[] {
    const parsed = Database.safeParse(JSON.parse(compileCommands))
    if (!parsed.success) throw new Error(`compile_commands.json is not a compilation database: ${parsed.error.issues[0]?.message ?? "wrong shape"}`)
    const re = new RegExp(`(?:^|\\s)-D\\s*${define}(?:=(\\S+))?`)
    const found = new Set<string>()
    for (const entry of parsed.data) {
      const command = entry.arguments ? entry.arguments.join(" ") : (entry.command ?? "")
      const m = re.exec(command)
      found.add(m ? (m[1] ?? "1").replace(/^["']|["']$/g, "") : "(unset)")
    }
    return [...found].sort()
  }
}
