/**
 * The service probe with a real service: line-service.cpp built with g++, run in its own network namespace
 * by the real bwrap and nsenter, captured by the real tcpdump, probed by the real nc (netcat-openbsd). After
 * every test, /proc holds no process carrying the run's marker: no service, tcpdump, probe or namespace left.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import { Proc } from "../../src/scheduler/runtime/process"
import { CaptureSummary } from "../../src/scheduler/runtime/verify/capture-summary"
import { ProbeTools } from "../../src/scheduler/runtime/verify/probe-tools"
import { ServiceProbe } from "../../src/scheduler/runtime/verify/service-probe"
import { findBun } from "../scheduler/crash-harness"
import { beforeStallEnds } from "../support/stall"
import { type LineServiceWorktree, makeLineServiceWorktree, markedProcesses } from "./line-service"

let w: LineServiceWorktree
let runs = 0
const started: string[] = []

beforeAll(() => {
  w = makeLineServiceWorktree()
})
afterAll(() => w?.cleanup())
afterEach(async () => {
  // Nothing a run started may outlive it: everything is stopped before run() returns.
  for (const runId of started.splice(0)) expect(markedProcesses(runId)).toEqual([])
})

async function probe(name: string, spec: ServiceProbe.SpecInput, more: Partial<ServiceProbe.Options> = {}) {
  const runId = `${name}-${process.pid}-${++runs}`
  started.push(runId)
  const outDir = w.outDir(runId)
  const result = await ServiceProbe.run(spec, { worktree: w.worktree, outDir, runId, ...more })
  const summary = () => CaptureSummary.Summary.parse(result.report.capture)
  return { result, outDir, runId, summary, text: (file: ServiceProbe.EvidenceFile) => readFileSync(join(outDir, ServiceProbe.FILES[file]), "utf8") }
}

describe("a service that answers", () => {
  test("the probe passes and the capture holds the reply, with exact bytes each way", async () => {
    const { result, summary, text, outDir } = await probe("pass", w.spec(["--port", "7000", "--reply", "HELLO FROM 7000"], {
      probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\nPING\nPING\n", expect: { contains: "HELLO FROM 7000", matches: "^(HELLO FROM 7000\\n){3}$" }, exitCode: 0 },
    }))
    expect(result.verdict).toMatchObject({ ok: true, kind: "passed" })
    expect(result.verdict.reason).toContain("'HELLO FROM 7000'")
    for (const name of Object.values(ServiceProbe.FILES)) expect(existsSync(join(outDir, name)), name).toBe(true)
    const s = summary()
    expect(s.connections).toHaveLength(1)
    const c = s.connections[0]!
    expect(c.server).toEqual({ address: "127.0.0.1", port: 7000 })
    expect(c.opened).toBe(true)
    expect(c.ended).toBe("fin")
    // Three "PING\n" out, three "HELLO FROM 7000\n" back: TCP payload bytes, counted from the headers.
    expect(c.toServer.bytes).toBe(15)
    expect(c.toClient.bytes).toBe(3 * 16)
    expect(c.toClient.firstLines).toEqual(["HELLO FROM 7000", "HELLO FROM 7000", "HELLO FROM 7000"])
    expect(c.toServer.firstLines).toEqual(["PING", "PING", "PING"])
    expect(s.addresses).toEqual(["127.0.0.1"])
    expect(result.report.namespace?.interfaces).toEqual(["lo"])
    // The raw capture holds the reply's bytes, and the summary a person reads names them.
    expect(readFileSync(join(outDir, ServiceProbe.FILES.pcap)).includes("HELLO FROM 7000\n")).toBe(true)
    expect(text("summaryText")).toMatch(/server → client: 48 bytes\n\s+\| HELLO FROM 7000/)
    expect(text("probeLog")).toContain("exit: 0")
    expect(text("serviceLog")).toContain("listening on 127.0.0.1:7000")
    expect(ServiceProbe.Report.parse(JSON.parse(text("summaryJson"))).verdict.ok).toBe(true)
  })
})

describe("a service that misbehaves gets a verdict naming what happened", () => {
  test("wrong bytes: the probe fails naming what it got", async () => {
    const { result, summary, outDir } = await probe("wrong", w.spec(["--port", "7000", "--reply", "PANG"]))
    expect(result.verdict).toMatchObject({ ok: false, kind: "probe-output", cause: "program" })
    expect(result.verdict.reason).toBe("the probe's output lacks 'PONG' (it printed: 'PANG\\n')")
    expect(summary().connections[0]!.toClient.firstLines).toEqual(["PANG"])
    const message = ServiceProbe.describe(result)
    expect(message).toMatch(/^The service probe failed: the probe's output lacks 'PONG' \(it printed: 'PANG\\n'\)\.\nCaptured: 127\.0\.0\.1:\d+ → 127\.0\.0\.1:7000: 5 bytes sent, 5 bytes back, first reply line "PANG"\.\nEvidence: /)
    expect(message).toContain(join(outDir, ServiceProbe.FILES.pcap))
  })

  test("a service that never listens: the bounded verdict, long before its sleep ends", async () => {
    // The service's 600 s listen delay is the stall: the verdict must come before it ends, whatever the load.
    const { result, text } = await beforeStallEnds(probe("silent", w.spec(["--port", "7000", "--listen-delay-ms", "600000"], { listenTimeoutS: 1 })), {
      ms: 600_000,
      what: "the service's listen delay",
    })
    expect(result.verdict).toMatchObject({ ok: false, kind: "never-listened" })
    expect(result.verdict.reason).toBe("the service never listened on port 7000 within 1.0 s (it listens on no port)")
    expect(text("serviceLog")).toContain("line-service starting")
  })

  test("a service listening on another port: both ports named", async () => {
    // 3 s: long enough for the service to listen on its own port on a loaded machine.
    const { result } = await probe("elsewhere", w.spec(["--port", "7001"], { listenTimeoutS: 3 }))
    expect(result.verdict.reason).toBe("the service never listened on port 7000 within 3.0 s (it listens on 7001)")
  })

  test("a probe that hangs: the timeout verdict", async () => {
    // Without -N, nc keeps the connection open after its input, and the service waits for more lines.
    const { result, text } = await probe("hang", w.spec(["--port", "7000"], { probe: { command: "nc", args: ["127.0.0.1", "7000"], input: "PING\n", timeoutS: 3, expect: { contains: "PONG" } } }))
    expect(result.verdict).toMatchObject({ ok: false, kind: "probe-timeout" })
    expect(result.verdict.reason).toBe("the probe did not finish within 3.0 s (it printed: 'PONG\\n')")
    expect(text("probeLog")).toContain("did not finish within 3.0 s")
  })

  test("a service that exits before listening: its exit and its last words", async () => {
    const { result } = await probe("exits", w.spec(["--port", "7000", "--exit-before-listen", "3"]))
    expect(result.verdict).toMatchObject({ ok: false, kind: "service-exited" })
    expect(result.verdict.reason).toBe("the service exited with 3 before listening on port 7000; its last output: 'line-service starting (port 7000)\\nconfiguration broken, exiting with 3'")
  })

  test("a service that crashes on the request: the signal named", async () => {
    const { result, text } = await probe("crash", w.spec(["--port", "7000", "--crash-on-line", "1"]))
    expect(result.verdict).toMatchObject({ ok: false, kind: "probe-output" })
    expect(result.verdict.reason).toBe("the probe's output lacks 'PONG' (it printed nothing)")
    expect(text("serviceLog")).toContain("ended: exited with 139 (killed by SIGSEGV)")
    expect(result.report.service?.ended).toBe("exited with 139 (killed by SIGSEGV)")
  })

  test("a crash after a right reply still fails: a service must outlive its probe", async () => {
    // The reply to the first line goes out, then the second line crashes it: the output holds PONG, the service is gone.
    const { result } = await probe("crash-late", w.spec(["--port", "7000", "--crash-on-line", "2"], { probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\nPING\n", expect: { contains: "PONG" } } }))
    expect(result.verdict).toMatchObject({ ok: false, kind: "service-exited" })
    expect(result.verdict.reason).toMatch(/^the service exited with 139 \(killed by SIGSEGV\) while the probe ran; its last output: '.*crashing on a request'$/)
  })
})

describe("bounds", () => {
  test("a chatty service: the capture stops at its packet limit, the file stays within its bound", async () => {
    const maxPackets = 40
    const snaplen = 200
    const { result, summary, outDir, text } = await probe("chatty", w.spec(["--port", "7000", "--chatty-bytes", "20000000"], {
        capture: { maxPackets, snaplen, maxSeconds: 60 },
        probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], input: "PING\n", timeoutS: 60, expect: { contains: "PONG" } },
      }))
    // The probe itself passes: 20 MB then PONG (the probe's log keeps head and tail).
    expect(result.verdict).toMatchObject({ ok: true })
    const size = statSync(join(outDir, ServiceProbe.FILES.pcap)).size
    expect(size).toBeLessThanOrEqual(24 + maxPackets * (16 + snaplen))
    const s = summary()
    expect(s.packets).toBe(maxPackets)
    expect(s.packetLimitReached).toBe(true)
    expect(s.connections[0]!.toClient.cut).toBe(true)
    expect(text("summaryText")).toContain("the capture stopped at its packet limit")
  })

  test("a service reaching for an address outside its namespace cannot: nothing reaches the host", async () => {
    // A capture on every host interface, for that address only, while the probe runs: it must see nothing.
    const watch = new AbortController()
    let said = ""
    const host = Proc.run("tcpdump", ["-i", "any", "-n", "-c", "10", "host", "10.255.255.1"], { cwd: "/", env: process.env, timeoutMs: 120_000, signal: watch.signal, onOutput: (c) => (said += c.toString()) })
    for (let i = 0; i < 300 && !/listening on/.test(said); i++) await new Promise((r) => setTimeout(r, 50))
    expect(said).toMatch(/listening on/)
    const { result, summary, text } = await probe("outside", w.spec(["--port", "7000", "--connect-out", "10.255.255.1:80"]))
    watch.abort()
    const seen = await host
    expect(result.verdict).toMatchObject({ ok: true })
    // In the service's log: the connect failed at once (no route: the namespace has only lo).
    expect(text("serviceLog")).toContain("connect to 10.255.255.1:80 failed: Network is unreachable")
    expect(result.report.namespace?.interfaces).toEqual(["lo"])
    expect(summary().addresses).toEqual(["127.0.0.1"])
    expect(seen.stderr).toMatch(/^0 packets captured/m)
  })

  test("an abort mid-probe stops everything and says so", async () => {
    const abort = new AbortController()
    const { result } = await probe("abort", w.spec(["--port", "7000"], { probe: { command: "nc", args: ["127.0.0.1", "7000"], input: "PING\n", timeoutS: 600, expect: { contains: "PONG" } } }), {
      signal: abort.signal,
      onPhase: (phase) => {
        if (phase === "probe") setTimeout(() => abort.abort(), 300)
      },
    })
    expect(result.verdict).toMatchObject({ ok: false, kind: "aborted", reason: "the service probe was stopped (the run was aborted)" })
  })

  test("SIGKILL of our own process mid-probe leaves nothing behind", async () => {
    const bun = findBun()
    expect(bun, "bun (./start.sh setup installs it)").toBeTruthy()
    const runId = `sigkill-${process.pid}`
    started.push(runId)
    const spec = w.spec(["--port", "7000"], { probe: { command: "nc", args: ["127.0.0.1", "7000"], input: "PING\n", timeoutS: 600, expect: { contains: "PONG" } } })
    const child = spawn(bun!, [join(import.meta.dirname, "service-probe-child.ts"), JSON.stringify({ spec, worktree: w.worktree, outDir: w.outDir(runId), runId })], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString()
          if (out.includes("phase probe")) resolve()
        })
        child.on("exit", (code) => reject(new Error(`the child ended (${code}) before its probe: ${out}`)))
      })
      // The probe's phase has begun; its nc is up a moment later (nsenter, then bwrap, then nc).
      const running = () => markedProcesses(runId).map((p) => p.command).join("\n")
      for (let i = 0; i < 400 && !running().includes("nc 127.0.0.1 7000"); i++) await new Promise((r) => setTimeout(r, 50))
      const before = running()
      expect(before).toContain("line-service")
      expect(before).toContain("tcpdump")
      expect(before).toContain("nc 127.0.0.1 7000")
    } finally {
      child.kill("SIGKILL")
    }
    // Bounded: the probe would hang for 600 s; everything must be gone long before.
    for (let i = 0; i < 200 && markedProcesses(runId).length > 0; i++) await new Promise((r) => setTimeout(r, 50))
    expect(markedProcesses(runId)).toEqual([])
  })
})

describe("bad input and missing tools", () => {
  test("a spec without what the output must hold is refused, naming the field", async () => {
    const { result } = await probe("badspec", { ...w.spec(["--port", "7000"]), probe: { command: "nc", args: [], expect: {} } } as ServiceProbe.SpecInput)
    expect(result.verdict).toMatchObject({ ok: false, kind: "bad-spec", cause: "spec" })
    expect(result.verdict.reason).toContain("probe.expect: what the output must hold: contains, matches, or both")
  })

  test("an evidence dir inside the worktree (which the service may write) is a caller's error, thrown", async () => {
    await expect(ServiceProbe.run(w.spec(["--port", "7000"]), { worktree: w.worktree, outDir: join(w.worktree, "evidence") })).rejects.toThrow(/the evidence directory .* is inside the worktree/)
  })

  test("a run aborted before it starts starts nothing", async () => {
    const abort = new AbortController()
    abort.abort()
    const { result } = await probe("preabort", w.spec(["--port", "7000"]), { signal: abort.signal })
    expect(result.verdict).toMatchObject({ ok: false, kind: "aborted" })
    expect(result.report.service).toBeUndefined()
  })

  test("a cwd climbing out of the worktree is refused", async () => {
    const { result } = await probe("climb", w.spec(["--port", "7000"], { service: { command: "build/line-service", cwd: "../.." } }))
    expect(result.verdict.kind).toBe("bad-spec")
    expect(result.verdict.reason).toContain("service.cwd")
  })

  test("a service not built names its path and what to do", async () => {
    const { result } = await probe("unbuilt", w.spec([], { service: { command: "build/missing-server" } }))
    expect(result.verdict).toMatchObject({ ok: false, kind: "command-missing" })
    expect(result.verdict.reason).toBe(`the service's command build/missing-server (${join(w.worktree, "build/missing-server")}) does not exist or is not executable: build the project first, or fix service.command`)
  })

  test("tcpdump missing is a missing tool with its install command, never a pass", async () => {
    // A PATH with every other tool the probe drives, but no tcpdump (it is in /usr/bin here, not in an sbin dir).
    const bin = join(w.dir, "bin-without-tcpdump")
    mkdirSync(bin, { recursive: true })
    for (const tool of ["bwrap", "nsenter", "setpriv", "nc"]) if (!existsSync(join(bin, tool))) symlinkSync(ProbeTools.which(tool, process.env)!, join(bin, tool))
    expect(ProbeTools.which("tcpdump", { PATH: bin }), "tcpdump must not be in an sbin dir for this test").toBeUndefined()
    const { result, outDir } = await probe("notools", w.spec(["--port", "7000"]), { env: { ...process.env, PATH: bin } })
    expect(result.verdict).toMatchObject({ ok: false, kind: "tool-missing", cause: "environment", missingTool: "tcpdump", install: "sudo apt-get install -y tcpdump (Debian/Ubuntu; Fedora: sudo dnf install tcpdump)" })
    expect(result.verdict.reason).toBe(
      "tcpdump is not installed, and the service probe needs it to capture the service's traffic: install it with sudo apt-get install -y tcpdump (Debian/Ubuntu; Fedora: sudo dnf install tcpdump), then run the probe again",
    )
    expect(existsSync(join(outDir, ServiceProbe.FILES.pcap))).toBe(false)
    expect(readFileSync(join(outDir, ServiceProbe.FILES.summaryText), "utf8")).toMatch(/^verdict: failed: tcpdump is not installed/)
  })
})
