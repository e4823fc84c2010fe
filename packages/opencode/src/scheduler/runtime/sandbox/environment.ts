import { IDENTITY_ENV } from "../git/git.ts"
/**
 * What a sandboxed command may see of the environment and of HOME. Kept apart from the mount plan so the
 * lists can be read (and reviewed) in one place.
 */
export namespace SandboxEnvironment {
  /** Variables builds need, passed through as they are. */
  export const KEEP: ReadonlySet<string> = new Set([
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "USER",
    "LOGNAME",
    "SHELL",
    "TZ",
    "COLUMNS",
    "NO_COLOR",
    "CLICOLOR",
    "SOURCE_DATE_EPOCH",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "NM",
    "RANLIB",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "LDLIBS",
    "MAKEFLAGS",
    "PKG_CONFIG_PATH",
    "PKG_CONFIG_LIBDIR",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    // Go's and Rust's analysers and builds: their caches, offline switches and targets (gates/analysers/go-vet.ts, clippy.ts).
    "GOCACHE",
    "GOPATH",
    "GOMODCACHE",
    "GOPROXY",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "GOTELEMETRY",
    "GOWORK",
    "GOROOT",
    "GOOS",
    "GOARCH",
    "GOPRIVATE",
    "GONOSUMDB",
    "GONOPROXY",
    "GOSUMDB",
    "CGO_ENABLED",
    "STATICCHECK_CACHE",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUSTC",
    "RUSTC_WRAPPER",
    // Who commits: the same variables git itself is let see.
    ...IDENTITY_ENV,
  ])
  /** Families of build variables, by prefix. */
  export const KEEP_PREFIXES = ["LC_", "CCACHE_", "DISTCC_", "CMAKE_", "CTEST_", "NINJA_", "VCPKG_", "CARGO_", "RUSTUP_"] as const
  /** Whatever its prefix, a name like these is a secret: never passed (CMAKE_…_TOKEN included). */
  export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION/i

  /** Variables naming a cache an analyser writes (gates/analysers/go-vet.ts, staticcheck.ts, clippy.ts). */
  export const TOOL_CACHES = ["GOCACHE", "STATICCHECK_CACHE", "CARGO_TARGET_DIR"] as const
  /** The temp dir's subdirectories AirCoding's analysers keep their caches in. */
  export const OWN_CACHE_DIRS = ["aircoding-go", "aircoding-cargo"] as const

  /** Whether `dir` lies in one of AirCoding's own cache directories under `tmp` (never `..` out of it). */
  export function isOwnCache(dir: string, tmp: string): boolean {
    const normal = dir.replace(/\/+$/, "")
    if (normal.split("/").includes("..")) return false
    return OWN_CACHE_DIRS.some((own) => normal === `${tmp}/${own}` || normal.startsWith(`${tmp}/${own}/`))
  }

  export function keeps(name: string): boolean {
    // Named ones are known (GIT_AUTHOR_NAME is no secret although it says AUTH); families are screened.
    if (KEEP.has(name)) return true
    return !SECRET_NAME.test(name) && KEEP_PREFIXES.some((p) => name.startsWith(p))
  }

  /** The environment a sandboxed command starts with: `source` reduced to what builds need. */
  export function reduce(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(source)) if (v !== undefined && keeps(k)) out[k] = v
    out.PATH ??= "/usr/local/bin:/usr/bin:/bin"
    return out
  }

  /**
   * Secrets under HOME (and the XDG dirs) hidden from a sandboxed command: directories get an empty tmpfs,
   * files an empty file. Relative to HOME unless absolute.
   */
  export const HOME_SECRETS = [
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".gitconfig",
    ".git-credentials",
    ".config/git",
    ".config/gh",
    ".config/gcloud",
    ".config/opencode",
    ".local/share/opencode",
    ".local/state/opencode",
  ] as const

  /** The engine's own config and data (auth.json lives there) under XDG dirs set elsewhere than HOME. */
  export function xdgSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
    const out: string[] = []
    for (const key of ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"]) {
      const dir = env[key]
      if (dir) out.push(`${dir}/opencode`)
    }
    if (env.XDG_CONFIG_HOME) out.push(`${env.XDG_CONFIG_HOME}/git`, `${env.XDG_CONFIG_HOME}/gh`)
    return out
  }

  /**
   * A `.env` file name (secrets by convention), or direnv's `.envrc` (it exports tokens as often as it sets
   * a PATH); `.env.example` and friends are documentation.
   */
  export function isEnvFile(name: string): boolean {
    if (name === ".envrc") return true
    return /^\.env(\..+)?$/.test(name) && !/\.(example|sample|template|dist)$/.test(name)
  }
}
