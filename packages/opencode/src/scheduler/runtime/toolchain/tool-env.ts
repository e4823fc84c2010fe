import { tmpdir } from "node:os"
import path from "node:path"

/**
 * The environment a language's tools need to run in the gates' sandbox, where HOME is read-only: their caches
 * in AirCoding's own directories under the temp dir (the sandbox binds only these writable), offline and local.
 * Only variables the environment leaves unset, so a person's own settings win.
 */
export namespace ToolEnv {
  /** Go: no module download, no toolchain switch, the build cache outside the worktree (go build, go test, go vet, staticcheck). */
  export function go(env: NodeJS.ProcessEnv): Record<string, string> {
    return unset(env, { GOCACHE: path.join(tmpdir(), "aircoding-go", "build-cache"), GOTOOLCHAIN: "local", GOPROXY: "off", GOTELEMETRY: "off" })
  }

  /** What the project's build and test commands need: Go's when one of them runs go (a Go area's `go build ./...`). */
  export function forCommands(commands: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
    return commands.some((command) => /(^|&&|;|\|)\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*go\s/.test(command)) ? go(env) : {}
  }

  function unset(env: NodeJS.ProcessEnv, wanted: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(wanted).filter(([key]) => env[key] === undefined || env[key] === ""))
  }
}
