import { timingSafeEqual, createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { dirname, extname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { serve, type ServerType } from "@hono/node-server"
import { Hono, type Context } from "hono"
import { streamSSE } from "hono/streaming"
import type { Lang } from "../text/words"
import { RunHub } from "./hub"
import { metricsHandler } from "./metrics-route"

/**
 * The dashboard's web server: read-only, GET only, on loopback unless told otherwise with a token.
 * The page is a solid-js app written with `solid-js/html` tagged templates, so it needs no build
 * step: solid's own ES modules are served from node_modules and found through an import map.
 */
export namespace DashboardServer {
  export const DEFAULT_PORT = 7357
  export const MIN_TOKEN_LENGTH = 16

  export type Options = {
    root: string
    lang: Lang
    host?: string
    port?: number
    token?: string
    pollMs?: number
  }

  export function isLoopback(host: string): boolean {
    const h = host.replace(/^\[|\]$/g, "").toLowerCase()
    return h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1" || /^127(\.\d{1,3}){3}$/.test(h) || h === "::ffff:127.0.0.1"
  }

  /** Why the server must not start with this host and token, or undefined when it may. */
  export function bindingProblem(host: string, token: string | undefined): string | undefined {
    if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
      return `the token is too short (${token.length} characters); use at least ${MIN_TOKEN_LENGTH}, e.g. from \`openssl rand -hex 16\``
    if (isLoopback(host)) return undefined
    if (!token)
      return (
        `refusing to serve the dashboard on ${host} without a token: anyone who can reach that address could read ` +
        `this project's code, diffs and logs. Add --token T (at least ${MIN_TOKEN_LENGTH} characters, e.g. from ` +
        "`openssl rand -hex 16`, or set AIRCODING_DASHBOARD_TOKEN) and open the URL it prints, or leave --host out to stay on 127.0.0.1."
      )
    return undefined
  }

  const WEB = join(dirname(fileURLToPath(import.meta.url)), "web")

  /** solid-js as the browser needs it: the three ES modules the page imports, nothing else. */
  const VENDOR: Record<string, string> = {
    "solid-js.js": "dist/solid.js",
    "solid-js-web.js": "web/dist/web.js",
    "solid-js-html.js": "html/dist/html.js",
  }

  function solidDir(): string {
    let dir = dirname(fileURLToPath(import.meta.url))
    for (;;) {
      const candidate = join(dir, "node_modules", "solid-js")
      if (existsSync(join(candidate, "package.json"))) return candidate
      const up = dirname(dir)
      if (up === dir) throw new Error("solid-js is not installed: run `bun install` in the AirCoding checkout")
      dir = up
    }
  }

  const COOKIE = "air_dashboard_token"

  /** The token of a request: a bearer or X-Air-Token header, ?token=, or the cookie set on the first visit. */
  function tokenOf(c: Context): { token: string; from: "header" | "query" | "cookie" } | undefined {
    const auth = c.req.header("authorization")
    if (auth?.toLowerCase().startsWith("bearer ")) return { token: auth.slice(7).trim(), from: "header" }
    const header = c.req.header("x-air-token")
    if (header) return { token: header, from: "header" }
    const query = c.req.query("token")
    if (query) return { token: query, from: "query" }
    const cookie = (c.req.header("cookie") ?? "").split(/;\s*/).find((part) => part.startsWith(`${COOKIE}=`))
    if (cookie) return { token: decodeURIComponent(cookie.slice(COOKIE.length + 1)), from: "cookie" }
    return undefined
  }

  function sameToken(given: string, expected: string): boolean {
    const a = createHash("sha256").update(given).digest()
    const b = createHash("sha256").update(expected).digest()
    return timingSafeEqual(a, b)
  }

  const SECURITY_HEADERS: Record<string, string> = {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    // solid-js/html compiles its templates with new Function: hence 'unsafe-eval'; nothing is loaded from elsewhere.
    "content-security-policy":
      "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
  }

  export function app(hub: RunHub, opts: { token?: string }): Hono {
    const app = new Hono()
    app.use("*", async (c, next) => {
      if (c.req.method !== "GET" && c.req.method !== "HEAD") return c.text("the dashboard is read-only\n", 405)
      let setCookie = false
      if (opts.token) {
        const given = tokenOf(c)
        if (!given || !sameToken(given.token, opts.token)) return c.text("a valid token is required: open the URL the dashboard printed (?token=…)\n", 401)
        // The page's scripts and styles load without the query: the first visit leaves the token in a cookie.
        setCookie = given.from === "query"
      } else {
        // On loopback without a token, refuse other Host names, so a web page cannot rebind a domain to 127.0.0.1 and read the run.
        const host = (c.req.header("host") ?? "").replace(/:\d+$/, "")
        if (!isLoopback(host)) return c.text(`refused: Host ${host || "(none)"} is not a loopback name\n`, 403)
      }
      await next()
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v)
      if (setCookie) c.header("set-cookie", `${COOKIE}=${encodeURIComponent(opts.token!)}; Path=/; HttpOnly; SameSite=Strict`)
    })

    app.get("/", (c) => {
      hub.tick()
      return c.html(indexHtml(hub.lang, hub.full()))
    })
    app.get("/favicon.ico", (c) => c.body(null, 204))
    app.get("/app.js", (c) => asset(c, "app.js", "text/javascript; charset=utf-8"))
    app.get("/style.css", (c) => asset(c, "style.css", "text/css; charset=utf-8"))
    app.get("/vendor/:file", (c) => {
      const rel = VENDOR[c.req.param("file")]
      if (!rel) return c.text("not found\n", 404)
      return c.body(readFileSync(join(solidDir(), rel), "utf8"), 200, { "content-type": "text/javascript; charset=utf-8" })
    })
    app.get("/api/run", (c) => c.json(hub.full()))
    app.get("/metrics", metricsHandler(hub.root))
    app.get("/api/tasks/:id", (c) => {
      const evidence = hub.evidence(c.req.param("id"))
      return evidence ? c.json(evidence) : c.json({ error: `no task ${c.req.param("id")} in this run` }, 404)
    })
    // A ui or service task's evidence files (screenshots, window tree, pcap, summary): only those, only of a task of
    // this run, only under the run's evidence directory (program-evidence.ts); any other path is not found.
    app.get("/api/tasks/:id/files/:attempt/:file{.+}", (c) => {
      const file = hub.evidenceFile(c.req.param("id"), Number(c.req.param("attempt")), c.req.param("file"))
      if (!file) return c.text(`no such evidence file of task ${c.req.param("id")}: ${c.req.param("attempt")}/${c.req.param("file")}\n`, 404)
      const type = CONTENT_TYPES[extname(file.path)] ?? "application/octet-stream"
      const headers: Record<string, string> = { "content-type": type }
      if (type === "application/vnd.tcpdump.pcap") headers["content-disposition"] = `attachment; filename="${c.req.param("id")}-capture.pcap"`
      return c.body(readFileSync(file.path), 200, headers)
    })
    app.get("/api/stream", (c) =>
      streamSSE(c, async (stream) => {
        let closed = false
        let wake: () => void = () => {}
        const stopped = new Promise<void>((resolve) => (wake = resolve))
        const unsubscribe = hub.subscribe((message) => {
          if (closed) return
          if (message.kind === "close") {
            closed = true
            wake()
            return
          }
          void stream.writeSSE({ event: message.kind, data: JSON.stringify(message.data) })
        })
        stream.onAbort(() => {
          closed = true
          unsubscribe()
          wake()
        })
        await stream.writeSSE({ event: "full", data: JSON.stringify(hub.full()) })
        const ping = setInterval(() => {
          if (!closed) void stream.write(": ping\n\n")
        }, 15_000)
        try {
          await stopped
        } finally {
          clearInterval(ping)
          unsubscribe()
          await stream.close()
        }
      }),
    )
    app.notFound((c) => c.text("not found\n", 404))
    return app
  }

  /** The evidence files' types (program-evidence.ts names them); text is served as text, never as a page. */
  const CONTENT_TYPES: Record<string, string> = {
    ".png": "image/png",
    ".json": "application/json; charset=utf-8",
    ".log": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".pcap": "application/vnd.tcpdump.pcap",
  }

  function asset(c: Context, name: string, type: string) {
    return c.body(readFileSync(join(WEB, name), "utf8"), 200, { "content-type": type })
  }

  /**
   * The page with the catalogue and the run as they are now, so its first paint shows words and the
   * current state, never raw keys or a stale "idle". A JSON data block is not run as a script; `<` is
   * escaped so no text of the run can close the element.
   */
  function indexHtml(lang: Lang, initial: unknown): string {
    const data = JSON.stringify(initial).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")
    return readFileSync(join(WEB, "index.html"), "utf8").replace("{{lang}}", lang).replace("{{initial}}", () => data)
  }

  export type Running = { url: string; port: number; host: string; close(): Promise<void> }

  /** Starts the server; rejects with a message a person can act on (port taken, host refused). */
  export async function start(opts: Options): Promise<Running> {
    const host = opts.host ?? "127.0.0.1"
    const problem = bindingProblem(host, opts.token)
    if (problem) throw new Error(problem)
    const hub = new RunHub(opts.root, opts.lang, opts.pollMs)
    const server: ServerType = await new Promise((resolve, reject) => {
      const s = serve({ fetch: app(hub, { token: opts.token }).fetch, hostname: host, port: opts.port ?? DEFAULT_PORT })
      s.once("listening", () => resolve(s))
      s.once("error", (err: NodeJS.ErrnoException) => {
        hub.stop()
        reject(
          new Error(
            err.code === "EADDRINUSE"
              ? `port ${opts.port ?? DEFAULT_PORT} on ${host} is in use; choose another with --port N (0 picks a free one)`
              : err.code === "EADDRNOTAVAIL"
                ? `${host} is not an address of this machine`
                : `cannot listen on ${host}:${opts.port ?? DEFAULT_PORT}: ${err.message}`,
          ),
        )
      })
    })
    const port = (server.address() as AddressInfo).port
    const shown = host.includes(":") ? `[${host}]` : host
    const url = `http://${shown}:${port}/${opts.token ? `?token=${encodeURIComponent(opts.token)}` : ""}`
    return {
      url,
      port,
      host,
      close: () =>
        new Promise<void>((resolve) => {
          hub.close()
          const s = server as ServerType & { closeAllConnections?: () => void }
          // Never hang on a client that keeps a connection open: give them a second, then go.
          const timer = setTimeout(resolve, 1000)
          s.close(() => {
            clearTimeout(timer)
            resolve()
          })
          s.closeAllConnections?.()
        }),
    }
  }
}
