import { accessSync, constants } from "node:fs"
import { delimiter, join } from "node:path"

/**
 * The programs a capture drives and the Debian packages they come in. A missing one is reported as missing,
 * with the command that installs it (never a silent pass); `./start.sh setup` installs them all.
 */
export namespace UiTools {
  export const TOOLS = [
    { tool: "Xvfb", package: "xvfb", why: "the private X display" },
    { tool: "xwd", package: "x11-apps", why: "the screenshot" },
    { tool: "xwininfo", package: "x11-utils", why: "the window tree" },
    { tool: "bwrap", package: "bubblewrap", why: "the sandbox, which also stops everything if AirCoding is killed" },
  ] as const

  export type Missing = { tools: string[]; packages: string[]; install: string; message: string }

  export function onPath(program: string, path: string | undefined): boolean {
    for (const dir of (path ?? "").split(delimiter)) {
      if (!dir) continue
      try {
        accessSync(join(dir, program), constants.X_OK)
        return true
      } catch {
        // next
      }
    }
    return false
  }

  /** What is missing on `path`, or undefined when everything is there. */
  export function missing(path: string | undefined): Missing | undefined {
    const absent = TOOLS.filter((t) => !onPath(t.tool, path))
    if (absent.length === 0) return undefined
    const packages = [...new Set(absent.map((t) => t.package))]
    const install = `sudo apt-get install -y ${packages.join(" ")}`
    const names = absent.map((t) => `${t.tool} (${t.why})`).join(", ")
    return {
      tools: absent.map((t) => t.tool),
      packages,
      install,
      message: `the ui capture needs ${names}, not installed on this machine. Install with: ${install} (or run ./start.sh setup), then run the capture again.`,
    }
  }

  /** `aircoding doctor`'s line: the ui capture's tools, with the command that installs what is missing. */
  export function doctorCheck(path = process.env.PATH): { name: string; ok: boolean; detail: string; fix?: string } {
    const name = "ui capture"
    if (process.platform !== "linux") return { name, ok: false, detail: `ui tasks' captures need Linux (Xvfb, bubblewrap); this is ${process.platform}`, fix: "run ui tasks on Linux (CI or a container)" }
    const absent = missing(path)
    if (absent) return { name, ok: false, detail: `${absent.tools.join(", ")} not installed: ui tasks cannot be captured`, fix: `${absent.install} (or ./start.sh setup)` }
    return { name, ok: true, detail: `${TOOLS.map((t) => t.tool).join(", ")} installed: ui tasks are captured on a private display` }
  }
}
