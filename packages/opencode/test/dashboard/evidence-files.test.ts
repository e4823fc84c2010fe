import { readFileSync, rmSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { RunHub } from "../../src/dashboard/hub"
import { DashboardServer } from "../../src/dashboard/server"
import { makeProgramRun, SUMMARY_TXT, WINDOW_TITLE } from "../support/program-evidence"
import { copyFixture } from "./helpers"

// The dashboard shows a ui task's before and after pictures and a service task's network summary (issue 37 item 4):
// it serves the files program-evidence.ts names, of a task of the run, from the run's evidence directory only.

const cleanups: (() => void)[] = []
afterEach(() => {
  while (cleanups.length) cleanups.pop()!()
})
const LOCAL = { host: "127.0.0.1:7357" }

function programApp(token?: string) {
  const copy = copyFixture()
  cleanups.push(copy.cleanup)
  makeProgramRun(copy.root)
  const hub = new RunHub(copy.root, "en")
  cleanups.push(() => hub.stop())
  return { root: copy.root, app: DashboardServer.app(hub, { token }) }
}

describe("the dashboard's program evidence", () => {
  test("a task's evidence carries its capture (pictures, windows, changed share) and its probe (network summary)", async () => {
    const { app } = programApp()
    const ui = await (await app.request("/api/tasks/T-1", { headers: LOCAL })).json()
    const program = ui.attempts[0].program
    expect(program.ui.changedShare).toBeCloseTo(0.98958, 5)
    expect(program.ui.windows).toEqual([{ title: WINDOW_TITLE, width: 320, height: 240, x: 0, y: 0 }])
    expect(program.ui.files.map((f: { rel: string }) => f.rel)).toContain("capture/before/screenshot.png")
    const service = await (await app.request("/api/tasks/T-3", { headers: LOCAL })).json()
    expect(service.attempts[0].program.service.summary).toEqual(SUMMARY_TXT)
    const code = await (await app.request("/api/tasks/T-2", { headers: LOCAL })).json()
    expect(code.attempts.map((a: { program: unknown }) => a.program)).toEqual([null, null])
  })

  test("the before and after pictures are served as PNGs, the pcap as a download, the summary as text", async () => {
    const { root, app } = programApp()
    const dir = join(root, ".air/local/evidence/T-1/attempt-1")
    for (const rel of ["capture/screenshot.png", "capture/before/screenshot.png"]) {
      const res = await app.request(`/api/tasks/T-1/files/1/${rel}`, { headers: LOCAL })
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("image/png")
      expect(Buffer.from(await res.arrayBuffer())).toEqual(readFileSync(join(dir, rel)))
    }
    const pcap = await app.request("/api/tasks/T-3/files/1/probe/capture.pcap", { headers: LOCAL })
    expect(pcap.headers.get("content-disposition")).toBe('attachment; filename="T-3-capture.pcap"')
    const summary = await app.request("/api/tasks/T-3/files/1/probe/summary.txt", { headers: LOCAL })
    expect(summary.headers.get("content-type")).toContain("text/plain")
    expect(await summary.text()).toContain("connections: 1")
  })

  test("path traversal and anything outside the named files is refused", async () => {
    const { root, app } = programApp()
    const refused = [
      "/api/tasks/T-1/files/1/../../../state/events.jsonl",
      "/api/tasks/T-1/files/1/..%2F..%2F..%2Fstate%2Fevents.jsonl",
      "/api/tasks/T-1/files/1/capture/..%2F..%2Freport.json",
      "/api/tasks/T-1/files/1/report.json",
      "/api/tasks/T-1/files/1/%2Fetc%2Fpasswd",
      "/api/tasks/..%2F..%2Fstate/files/1/capture/screenshot.png",
      "/api/tasks/T-1/files/0/capture/screenshot.png",
      "/api/tasks/T-1/files/-1/capture/screenshot.png",
      // A gate run the log has not reached, and a task that is not in the run.
      "/api/tasks/T-1/files/2/capture/screenshot.png",
      "/api/tasks/T-9/files/1/capture/screenshot.png",
    ]
    for (const url of refused) {
      const res = await app.request(url, { headers: LOCAL })
      expect([url, res.status]).toEqual([url, 404])
      expect(await res.text()).not.toContain("run.started")
    }
    // A link planted in the evidence that leads out of it is refused too.
    const shot = join(root, ".air/local/evidence/T-1/attempt-1/capture/screenshot.png")
    rmSync(shot)
    symlinkSync(join(root, ".air/local/state/events.jsonl"), shot)
    expect((await app.request("/api/tasks/T-1/files/1/capture/screenshot.png", { headers: LOCAL })).status).toBe(404)
  })

  test("the files need the token like every other route", async () => {
    const token = "s3cret-token-0123456789"
    const { app } = programApp(token)
    expect((await app.request("/api/tasks/T-1/files/1/capture/screenshot.png")).status).toBe(401)
    expect((await app.request(`/api/tasks/T-1/files/1/capture/screenshot.png?token=${token}`)).status).toBe(200)
  })
})
