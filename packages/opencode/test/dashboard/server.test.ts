import { readFileSync, writeFileSync } from "node:fs"
import { afterEach, describe, expect, test } from "vitest"
import { dashboardCommand } from "../../src/dashboard/command"
import { RunHub, type HubMessage } from "../../src/dashboard/hub"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { DashboardServer } from "../../src/dashboard/server"
import { capture } from "../cli-view/helpers"
import { append, copyFixture, keepFirst } from "./helpers"

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length) cleanups.pop()!()
})
function fixture() {
  const copy = copyFixture()
  cleanups.push(copy.cleanup)
  return copy.root
}

const LOCAL = { host: "127.0.0.1:7357" }

describe("dashboard binding", () => {
  test("a non-loopback host without a token is refused with a message saying what to do", () => {
    const problem = DashboardServer.bindingProblem("0.0.0.0", undefined)
    expect(problem).toMatch(/refusing to serve the dashboard on 0\.0\.0\.0 without a token/)
    expect(problem).toContain("--token")
    expect(DashboardServer.bindingProblem("192.168.1.20", undefined)).toBeDefined()
    expect(DashboardServer.bindingProblem("::", undefined)).toBeDefined()
  })

  test("loopback needs no token; another host may be used with a long enough token", () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"]) expect(DashboardServer.bindingProblem(host, undefined)).toBeUndefined()
    expect(DashboardServer.bindingProblem("0.0.0.0", "0123456789abcdef")).toBeUndefined()
    expect(DashboardServer.bindingProblem("0.0.0.0", "short")).toMatch(/too short/)
  })

  test("aircoding dashboard --host 0.0.0.0 without --token exits 1 and listens nowhere", async () => {
    const root = fixture()
    const saved = process.env.AIRCODING_DASHBOARD_TOKEN
    delete process.env.AIRCODING_DASHBOARD_TOKEN
    try {
      const r = await capture(() => dashboardCommand([root, "--host", "0.0.0.0", "--port", "0"]))
      expect(r.code).toBe(1)
      expect(r.stderr).toContain("refusing to serve the dashboard on 0.0.0.0 without a token")
      expect(r.stdout).toBe("")
    } finally {
      if (saved !== undefined) process.env.AIRCODING_DASHBOARD_TOKEN = saved
    }
  })

  test("starting on a non-loopback host without a token is refused by the server too", async () => {
    await expect(DashboardServer.start({ root: fixture(), lang: "en", host: "0.0.0.0", port: 0 })).rejects.toThrow(/without a token/)
  })

  test("--help prints the usage; a bad port is a usage error", async () => {
    const help = await capture(() => dashboardCommand(["--help"]))
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("aircoding dashboard [dir] [--port N]")
    const bad = await capture(() => dashboardCommand([fixture(), "--port", "http"]))
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("expected a port number")
  })

  test("a taken port is reported with what to do", async () => {
    const root = fixture()
    const first = await DashboardServer.start({ root, lang: "en", port: 0 })
    try {
      await expect(DashboardServer.start({ root, lang: "en", port: first.port })).rejects.toThrow(/in use; choose another with --port/)
    } finally {
      await first.close()
    }
  })
})

describe("dashboard HTTP", () => {
  function app(root: string, token?: string) {
    const hub = new RunHub(root, "en")
    cleanups.push(() => hub.stop())
    return DashboardServer.app(hub, { token })
  }

  test("the page, its script and solid-js are served; only the whitelisted vendor files", async () => {
    const a = app(fixture())
    const page = await a.request("/", { headers: LOCAL })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('"solid-js/html": "./vendor/solid-js-html.js"')
    expect((await a.request("/app.js", { headers: LOCAL })).headers.get("content-type")).toContain("javascript")
    expect((await a.request("/vendor/solid-js-web.js", { headers: LOCAL })).status).toBe(200)
    expect((await a.request("/vendor/package.json", { headers: LOCAL })).status).toBe(404)
    expect((await a.request("/vendor/..%2F..%2Fpackage.json", { headers: LOCAL })).status).toBe(404)
  })

  test("the page embeds the catalogue and the run; no text of the run can close its data block", async () => {
    const root = fixture()
    const file = RunData.eventsFile(root)
    const lines = readFileSync(file, "utf8").split("\n")
    const first = JSON.parse(lines[0]!)
    first.requirement = "</script><script>alert(1)</script> \u2028"
    lines[0] = JSON.stringify(first)
    writeFileSync(file, lines.join("\n"))
    const html = await (await app(root).request("/", { headers: LOCAL })).text()
    const data = /<script id="initial" type="application\/json">([^]*?)<\/script>/.exec(html)
    expect(data).not.toBeNull()
    expect(html).not.toContain("<script>alert(1)")
    const initial = JSON.parse(data![1]!)
    expect(initial.labels["ui.graph"]).toBe("Task graph")
    expect(initial.view).toMatchObject({ status: "done", requirement: "</script><script>alert(1)</script> \u2028" })
    expect(initial.events).toHaveLength(32)
  })

  test("read-only: anything but GET is refused", async () => {
    const res = await app(fixture()).request("/api/run", { method: "POST", headers: LOCAL, body: "{}" })
    expect(res.status).toBe(405)
  })

  test("without a token, a Host that is not a loopback name is refused (DNS rebinding)", async () => {
    const a = app(fixture())
    expect((await a.request("/api/run", { headers: { host: "attacker.example:7357" } })).status).toBe(403)
    expect((await a.request("/api/run", { headers: { host: "localhost:7357" } })).status).toBe(200)
  })

  test("with a token: 401 without it; ?token=, a bearer header or the cookie it sets are accepted", async () => {
    const token = "s3cret-token-0123456789"
    const a = app(fixture(), token)
    expect((await a.request("/api/run")).status).toBe(401)
    expect((await a.request("/api/run?token=wrong-token-0123456789")).status).toBe(401)
    const first = await a.request(`/?token=${token}`)
    expect(first.status).toBe(200)
    const cookie = first.headers.get("set-cookie")!
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/)
    expect((await a.request("/app.js", { headers: { cookie: cookie.split(";")[0]! } })).status).toBe(200)
    expect((await a.request("/api/run", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    expect((await a.request("/api/run", { headers: { "x-air-token": token } })).status).toBe(200)
  })

  test("the run and a task's evidence as JSON; an unknown task is a 404", async () => {
    const a = app(fixture())
    const run = (await (await a.request("/api/run", { headers: LOCAL })).json()) as { view: { status: string }; graph: { nodes: unknown[] }; events: unknown[] }
    expect(run.view.status).toBe("done")
    expect(run.graph.nodes).toHaveLength(3)
    expect(run.events).toHaveLength(32)
    const ev = (await (await a.request("/api/tasks/T-2", { headers: LOCAL })).json()) as { attempts: RunData.Attempt[]; review: RunData.ReviewFile }
    expect(ev.attempts.map((x) => x.report?.passed)).toEqual([false, true])
    expect(ev.attempts[0]!.logs.map((log) => [log.key, log.gate])).toEqual([["diff", "diff"], ["build", "build"], ["test", "test"], ["cppcheck", "analysis"]])
    expect(ev.attempts[0]!.logs.find((log) => log.key === "cppcheck")!.text).toContain("uninitvar")
    expect(ev.review.verdict).toBe("pass")
    expect((await a.request("/api/tasks/T-9", { headers: LOCAL })).status).toBe(404)
    expect((await a.request("/api/tasks/..%2F..%2Fetc", { headers: LOCAL })).status).toBe(404)
  })

  test("a gate no shipped file knows shows in the page's gate line and with its log, from what its report says", async () => {
    const root = fixture()
    const at = `${root}/.air/local/evidence/T-2/attempt-2`
    const report = JSON.parse(readFileSync(`${at}/report.json`, "utf8")) as RunData.GateReportFile
    report.gates.push({ gate: "no-todo", passed: true, ran: true, ms: 3, summary: "no TODO left", logPath: `/elsewhere/attempt-2/no-todo.log` })
    writeFileSync(`${at}/report.json`, JSON.stringify(report))
    writeFileSync(`${at}/no-todo.log`, "notes.txt: clean\n")
    const a = app(root)
    const run = (await (await a.request("/api/run", { headers: LOCAL })).json()) as { gateLines: Record<string, string> }
    // The bookkeeping gates (commit, diff, …) are the read model's to hide: the page is sent the line as it shows.
    expect(run.gateLines["T-2"]).toBe("build ✓ test ✓ cppcheck ✓ no-todo ✓")
    const ev = (await (await a.request("/api/tasks/T-2", { headers: LOCAL })).json()) as { attempts: RunData.Attempt[] }
    expect(ev.attempts[1]!.logs.at(-1)).toEqual({ gate: "no-todo", key: "no-todo", text: "notes.txt: clean\n" })
  })

  test("the stream starts with the whole run, then sends what is appended", async () => {
    const root = fixture()
    const lines = keepFirst(root, 10)
    const running = await DashboardServer.start({ root, lang: "en", port: 0, pollMs: 30 })
    const controller = new AbortController()
    try {
      const res = await fetch(running.url + "api/stream", { signal: controller.signal })
      expect(res.headers.get("content-type")).toContain("text/event-stream")
      const reader = res.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      const next = async (pattern: RegExp) => {
        while (!pattern.test(text)) {
          const { value, done } = await reader.read()
          if (done) throw new Error("stream ended")
          text += decoder.decode(value, { stream: true })
        }
      }
      await next(/event: full\ndata: .*\n\n/)
      expect(text).toContain('"seq":10')
      append(root, lines.slice(10, 12))
      await next(/event: update\ndata: .*\n\n/)
      const update = JSON.parse(/event: update\ndata: (.*)\n\n/.exec(text)![1]!) as { events: { seq: number }[] }
      expect(update.events.map((e) => e.seq)).toEqual([11, 12])
    } finally {
      controller.abort()
      await running.close()
    }
  })

  test("a replaced log (it shrank) is sent whole again", () => {
    const root = fixture()
    const hub = new RunHub(root, "en", 10_000)
    const got: HubMessage[] = []
    const stop = hub.subscribe((m) => got.push(m))
    try {
      const lines = keepFirst(root, 5)
      hub.tick()
      expect(got.map((m) => m.kind)).toEqual(["full"])
      const first = got[0]!
      expect(first.kind === "full" && first.data.events).toHaveLength(5)
      writeFileSync(RunData.eventsFile(root), lines.slice(0, 5).join("\n") + "\n" + lines[5] + "\n")
      hub.tick()
      expect(got.map((m) => m.kind)).toEqual(["full", "update"])
    } finally {
      stop()
    }
  })
})
