import { createHash, timingSafeEqual } from "node:crypto"
import type { AddressInfo } from "node:net"
import { serve, type ServerType } from "@hono/node-server"
import { Hono } from "hono"
import { DashboardServer } from "./server"
import { metricsHandler } from "./metrics-route"

/**
 * `aircoding metrics`: only `/metrics`, for a Prometheus that scrapes a run with no dashboard open. The dashboard's
 * binding rules hold (loopback unless a token is given); the token comes as Prometheus sends it, a bearer header
 * (`authorization: { credentials: T }` in its scrape config).
 */
export namespace MetricsServer {
  export const DEFAULT_PORT = 9477

  export type Running = { url: string; port: number; close(): Promise<void> }

  function sameToken(given: string, expected: string): boolean {
    return timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(expected).digest())
  }

  function app(root: string, token: string | undefined): Hono {
    const app = new Hono()
    app.use("*", async (c, next) => {
      if (token) {
        const auth = c.req.header("authorization") ?? ""
        if (!auth.toLowerCase().startsWith("bearer ") || !sameToken(auth.slice(7).trim(), token))
          return c.text("a valid token is required: send it as \"Authorization: Bearer T\" (Prometheus: authorization.credentials)\n", 401)
      } else {
        const host = (c.req.header("host") ?? "").replace(/:\d+$/, "")
        if (!DashboardServer.isLoopback(host)) return c.text(`refused: Host ${host || "(none)"} is not a loopback name\n`, 403)
      }
      await next()
    })
    app.get("/metrics", metricsHandler(root))
    app.notFound((c) => c.text("not found: this server has only /metrics\n", 404))
    return app
  }

  /** Starts the server; rejects with a message a person can act on (port taken, host refused). */
  export async function start(opts: { root: string; host: string; port: number; token?: string }): Promise<Running> {
    const problem = DashboardServer.bindingProblem(opts.host, opts.token)
    if (problem) throw new Error(problem.replace("the dashboard", "the metrics"))
    const server: ServerType = await new Promise((resolve, reject) => {
      const s = serve({ fetch: app(opts.root, opts.token).fetch, hostname: opts.host, port: opts.port })
      s.once("listening", () => resolve(s))
      s.once("error", (err: NodeJS.ErrnoException) =>
        reject(new Error(err.code === "EADDRINUSE" ? `port ${opts.port} on ${opts.host} is in use; choose another with --port N (0 picks a free one)` : `cannot listen on ${opts.host}:${opts.port}: ${err.message}`)),
      )
    })
    const port = (server.address() as AddressInfo).port
    const shown = opts.host.includes(":") ? `[${opts.host}]` : opts.host
    return {
      url: `http://${shown}:${port}/metrics`,
      port,
      close: () =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000)
          server.close(() => {
            clearTimeout(timer)
            resolve()
          })
          ;(server as ServerType & { closeAllConnections?: () => void }).closeAllConnections?.()
        }),
    }
  }
}
