import { randomBytes } from "node:crypto"
import { accessSync, constants, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { constants as osConstants } from "node:os"
import { isAbsolute, join, relative, resolve } from "node:path"
import { Proc } from "../process"
import { Sandbox } from "../sandbox/sandbox"
import { CaptureSummary } from "./capture-summary"
import { LoopbackNamespace } from "./loopback-namespace"
import { ProbeTools } from "./probe-tools"
import { ServiceProbeReport, ServiceProbeSpec, type ServiceProbeSpecInput, Verdict, type VerdictKind } from "./service-probe-spec"

/**
 * Network evidence in code (issue 37 item 3): a service started from the task's build in a network
 * namespace of its own (loopback only), a capture of that loopback while a probe talks to it, then all of
 * them stopped, and a verdict in words.
 *
 *   namespace (bwrap --unshare-net, sleeping) ── nsenter ──┬─ tcpdump -i lo (bounded: -c, -s, a time limit)
 *                                                          ├─ bwrap sandbox ─ the service (worktree writable, private /tmp)
 *                                                          └─ bwrap sandbox ─ the probe (once the ports listen)
 *
 * Every process runs through `exec` in its own group and is ended on every path (the probe's end, an error,
 * an abort); if we are SIGKILLed, bwrap's --die-with-parent and setpriv's --pdeathsig end them: nothing
 * they started outlives us. Every process carries `MARKER_ENV=<runId>` in its environment, so a test (or a
 * person) finds any left behind in /proc.
 */
export namespace ServiceProbe {
  export const Spec = ServiceProbeSpec
  export type Spec = ServiceProbeSpec
  export type SpecInput = ServiceProbeSpecInput
  export const Report = ServiceProbeReport
  export type Report = ServiceProbeReport

  export const FILES = {
    pcap: "capture.pcap",
    summaryText: "summary.txt",
    summaryJson: "summary.json",
    probeLog: "probe.log",
    serviceLog: "service.log",
  } as const
  export type EvidenceFile = keyof typeof FILES

  export const MARKER_ENV = "AIRCODING_SERVICE_PROBE"
  export type Phase = "namespace" | "capture" | "service" | "listening" | "probe" | "stopping"

  /** How long the namespace and the capture may take to come up: milliseconds when well, a loaded machine aside. */
  const START_TIMEOUT_MS = 15_000
  /** After the probe, for the last segments (FIN, ACK) to reach the capture: loopback delivers synchronously. */
  const DRAIN_MS = 150
  const POLL_MS = 50
  const LOG_CAP = 1024 * 1024

  export interface Options {
    /** The task's worktree: the service and the probe run there, and may write only there and in a private /tmp. */
    worktree: string
    /** Where the evidence files go (created; earlier evidence files there are replaced). */
    outDir: string
    /**
     * Runs a program (default: the process runner). Not the gates' sandboxed exec: this module puts the
     * service and the probe in its own sandbox, inside its namespace.
     */
    exec?: Exec
    signal?: AbortSignal
    /** The environment the sandbox reduces for the service and the probe; default process.env. */
    env?: Readonly<Record<string, string | undefined>>
    /** Marks every process started (MARKER_ENV); default a random id. */
    runId?: string
    /** Told as each step begins (progress; the tests kill us mid-probe). */
    onPhase?: (phase: Phase) => void
  }

  export interface Result {
    verdict: Verdict
    report: Report
    /** The evidence files written, by kind (a failure before the capture has no pcap). */
    files: Partial<Record<EvidenceFile, string>>
  }

  /** The process runner's signature (stdin input included, which the gates' Exec lacks). */
  export type Exec = (command: string, args: readonly string[], options: Proc.Options) => Promise<Proc.Result>

  const defaultExec: Exec = (command, args, options) => Proc.run(command, args, { ...options, outputCap: LOG_CAP })

  export async function run(input: SpecInput, options: Options): Promise<Result> {
    const started = Date.now()
    const outDir = resolve(options.outDir)
    const worktree = resolve(options.worktree)
    // The service may write its worktree: evidence kept there could be rewritten by what it judges.
    if (!relative(worktree, outDir).startsWith("..")) throw new Error(`ServiceProbe.run: the evidence directory ${outDir} is inside the worktree ${worktree}; give one outside it (the task's evidence dir)`)
    mkdirSync(outDir, { recursive: true })
    for (const name of Object.values(FILES)) rmSync(join(outDir, name), { force: true })
    const finish = (report: Omit<Report, "timings"> & { timings?: Partial<Report["timings"]> }, extra: { text?: string; capture?: string } = {}): Result => {
      const full = Report.parse({ ...report, timings: { ...report.timings, totalMs: Date.now() - started } })
      const files: Partial<Record<EvidenceFile, string>> = {}
      for (const [kind, name] of Object.entries(FILES) as [EvidenceFile, string][]) {
        try {
          accessSync(join(outDir, name), constants.R_OK)
          files[kind] = join(outDir, name)
        } catch {
          // not written on this path
        }
      }
      files.summaryJson = write(outDir, FILES.summaryJson, JSON.stringify(full, null, 2) + "\n")
      files.summaryText = write(outDir, FILES.summaryText, [`verdict: ${full.verdict.ok ? "passed" : "failed"}: ${full.verdict.reason}`, extra.text, extra.capture].filter(Boolean).join("\n") + "\n")
      return { verdict: full.verdict, report: full, files }
    }
    const refuse = (kind: VerdictKind, cause: Verdict["cause"], reason: string, more: Partial<Verdict> = {}) => finish({ verdict: { ok: false, kind, cause, reason, ...more } })

    const parsed = Spec.safeParse(input)
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(the spec)"}: ${i.message}`).join("; ")
      return refuse("bad-spec", "spec", `the service probe's spec is invalid (${issues}): fix the task's service fields`)
    }
    const spec = parsed.data
    const source = options.env ?? process.env
    const tools = ProbeTools.find(source)
    if (!tools.ok) return refuse("tool-missing", "environment", tools.message, { missingTool: tools.tool.name, install: tools.install })
    const ready = readiness(source)
    if (!ready.ok) return refuse("namespace-failed", "environment", ready.message)
    if (options.signal?.aborted) return refuse("aborted", "environment", aborted().reason)

    const serviceFound = locate("service", spec.service, worktree, source)
    if (!serviceFound.ok) return refuse("command-missing", "spec", serviceFound.message)
    const probeFound = locate("probe", spec.probe, worktree, source)
    if (!probeFound.ok) return refuse("command-missing", "spec", probeFound.message)
    const service = serviceFound
    const probe = probeFound

    const runId = options.runId ?? randomBytes(6).toString("hex")
    const exec = options.exec ?? defaultExec
    const hostEnv: NodeJS.ProcessEnv = { PATH: source.PATH ?? "/usr/local/bin:/usr/bin:/bin", [MARKER_ENV]: runId }
    const policy = Sandbox.plan({ worktree, env: source, network: true, git: false })
    const inside = (argv: readonly string[], env: Record<string, string>) => Sandbox.wrap(argv, { ...policy, env: { ...policy.env, ...env, [MARKER_ENV]: runId } })

    options.onPhase?.("namespace")
    const opened = await LoopbackNamespace.open({ exec, env: hostEnv, bwrap: tools.paths.bwrap!, nsenter: tools.paths.nsenter!, timeoutMs: START_TIMEOUT_MS, signal: options.signal })
    if (!opened.ok) return options.signal?.aborted ? refuse("aborted", "environment", aborted().reason) : refuse("namespace-failed", "environment", opened.message)
    const ns = opened.namespace

    const stopCapture = new AbortController()
    const stopService = new AbortController()
    const stopProbe = new AbortController()
    const onAbort = () => [stopCapture, stopService, stopProbe].forEach((c) => c.abort())
    options.signal?.addEventListener("abort", onAbort, { once: true })
    const pcapPath = join(outDir, FILES.pcap)
    const serviceArgv = [service.path, ...spec.service.args]
    const probeArgv = [probe.path, ...spec.probe.args]
    let capture: Promise<Proc.Result> | undefined
    let serviceRun: Promise<Proc.Result> | undefined
    let serviceEnded: Proc.Result | undefined
    let probeResult: Proc.Result | undefined
    let listenMs: number | undefined
    let listening: number[] = []
    /** Why the run stopped before the probe's output could be judged. */
    let early: { kind: VerdictKind; cause: Verdict["cause"]; reason: string } | undefined
    let captureSaid = ""

    const steps = async (): Promise<void> => {
      options.onPhase?.("capture")
      let ready: (() => void) | undefined
      const captureReady = new Promise<void>((r) => (ready = r))
      // setpriv --pdeathsig: tcpdump is our child (nsenter and setpriv exec it), so it dies with us.
      const tcpdump = ns.enter([tools.paths.setpriv!, "--pdeathsig", "KILL", "--", tools.paths.tcpdump!, "-i", "lo", "-n", "-U", "--immediate-mode", "-Z", "root", "-s", String(spec.capture.snaplen), "-c", String(spec.capture.maxPackets), "-w", pcapPath])
      capture = exec(tcpdump[0]!, tcpdump.slice(1), {
        cwd: outDir,
        env: hostEnv,
        timeoutMs: spec.capture.maxSeconds * 1000,
        signal: stopCapture.signal,
        onOutput: (chunk) => {
          captureSaid += chunk.toString("utf8")
          if (/listening on/.test(captureSaid)) ready?.()
        },
      })
      void capture.then(() => ready?.())
      await Promise.race([captureReady, delay(START_TIMEOUT_MS)])
      if (options.signal?.aborted) return void (early = aborted())
      if (!/listening on/.test(captureSaid)) {
        early = { kind: "capture-failed", cause: "environment", reason: `the capture (tcpdump on the namespace's lo) did not start: ${oneLine(captureSaid) || `no word from it within ${START_TIMEOUT_MS / 1000} s`}` }
        return
      }

      options.onPhase?.("service")
      const listenStarted = Date.now()
      const serviceCommand = ns.enter(inside(serviceArgv, spec.service.env))
      serviceRun = exec(serviceCommand[0]!, serviceCommand.slice(1), {
        cwd: service.cwd,
        env: hostEnv,
        // A backstop: the service is stopped after the probe.
        timeoutMs: (spec.listenTimeoutS + spec.probe.timeoutS) * 1000 + 60_000,
        signal: stopService.signal,
      })
      void serviceRun.then((r) => (serviceEnded = r))

      options.onPhase?.("listening")
      const deadline = listenStarted + spec.listenTimeoutS * 1000
      for (;;) {
        listening = ns.listeningPorts()
        if (spec.ports.every((p) => listening.includes(p))) {
          listenMs = Date.now() - listenStarted
          break
        }
        if (options.signal?.aborted) return void (early = aborted())
        if (serviceEnded) {
          early = { kind: "service-exited", cause: "program", reason: `the service ${ended(serviceEnded)} before listening on ${portList(spec.ports)}${lastWords(serviceEnded)}` }
          return
        }
        if (Date.now() >= deadline) {
          const missing = spec.ports.filter((p) => !listening.includes(p))
          const elsewhere = listening.length ? `it listens on ${listening.join(", ")}` : "it listens on no port"
          early = { kind: "never-listened", cause: "program", reason: `the service never listened on ${portList(missing)} within ${Proc.seconds(spec.listenTimeoutS * 1000)} (${elsewhere})` }
          return
        }
        await delay(POLL_MS)
      }

      options.onPhase?.("probe")
      const probeCommand = ns.enter(inside(probeArgv, spec.probe.env))
      probeResult = await exec(probeCommand[0]!, probeCommand.slice(1), {
        cwd: probe.cwd,
        env: hostEnv,
        timeoutMs: spec.probe.timeoutS * 1000,
        signal: stopProbe.signal,
        ...(spec.probe.input !== undefined ? { input: spec.probe.input } : {}),
      })
      await delay(DRAIN_MS)
    }

    let thrown: unknown
    try {
      await steps()
    } catch (error) {
      thrown = error
    }
    // Every path ends here: the probe, the capture (tcpdump flushes on SIGTERM), the service, the namespace.
    options.onPhase?.("stopping")
    stopProbe.abort()
    stopCapture.abort()
    stopService.abort()
    const captureResult = capture ? await capture : undefined
    const serviceResult = serviceRun ? await serviceRun : undefined
    await ns.close()
    options.signal?.removeEventListener("abort", onAbort)
    if (thrown) throw thrown
    return conclude(captureResult, serviceResult)

    function conclude(captureResult: Proc.Result | undefined, serviceResult: Proc.Result | undefined): Result {
      const serviceEnd = !serviceResult ? "never started" : endedAlone(serviceResult) ? ended(serviceResult) : "still running at the end, then stopped"
      if (serviceResult) {
        write(outDir, FILES.serviceLog, `$ ${serviceArgv.map(Sandbox.quote).join(" ")}\ncwd: ${service.cwd}\nended: ${serviceEnd}\n--- output (stdout and stderr) ---\n${serviceResult.output}`)
      }
      if (probeResult) {
        const shownInput = spec.probe.input !== undefined ? ` (stdin: ${JSON.stringify(spec.probe.input)})` : ""
        write(outDir, FILES.probeLog, `$ ${probeArgv.map(Sandbox.quote).join(" ")}${shownInput}\ncwd: ${probe.cwd}\nexit: ${probeResult.code ?? "none"} (${Proc.describe(probeResult, spec.probe.timeoutS * 1000)}, ${Proc.seconds(probeResult.ms)})\n--- output (stdout and stderr) ---\n${probeResult.output}`)
      }
      let summary: CaptureSummary.Summary | undefined
      let captureText: string | undefined
      let captureProblem: string | undefined
      try {
        summary = CaptureSummary.fromPcap(readFileSync(pcapPath), { servicePorts: spec.ports, maxPackets: spec.capture.maxPackets })
        const limits = `limits: ${spec.capture.maxPackets} packets, snaplen ${spec.capture.snaplen} bytes, ${spec.capture.maxSeconds} s${captureResult?.timedOut ? "; stopped at its time limit" : ""}`
        captureText = CaptureSummary.render(summary, { file: FILES.pcap, interfaces: ns.interfaces, limits })
      } catch (error) {
        if (captureResult) captureProblem = `the capture file could not be read (${(error as Error).message}); tcpdump said: ${oneLine(captureResult.stderr) || "nothing"}`
      }
      const dropped = /(\d+) packets? dropped by kernel/.exec(captureResult?.stderr ?? "")
      const verdict = judge(serviceResult, captureProblem)
      const text = [
        `service: ${serviceArgv.map(Sandbox.quote).join(" ")} (ports ${spec.ports.join(", ")}; listening: ${listening.join(", ") || "none"}${listenMs !== undefined ? ` after ${Proc.seconds(listenMs)}` : ""}; ${serviceEnd})`,
        probeResult ? `probe: ${probeArgv.map(Sandbox.quote).join(" ")}: ${Proc.describe(probeResult, spec.probe.timeoutS * 1000)} after ${Proc.seconds(probeResult.ms)}` : "probe: not run",
      ].join("\n")
      return finish(
        {
          verdict,
          namespace: { interfaces: [...ns.interfaces] },
          service: { command: serviceArgv, expectedPorts: spec.ports, listening, ended: serviceEnd },
          ...(probeResult ? { probe: { command: probeArgv, exitCode: probeResult.code, timedOut: probeResult.timedOut, ms: probeResult.ms } } : {}),
          ...(summary ? { capture: summary } : {}),
          ...(dropped ? { droppedByKernel: Number(dropped[1]) } : {}),
          timings: { ...(listenMs !== undefined ? { listenMs } : {}), ...(probeResult ? { probeMs: probeResult.ms } : {}) },
        },
        { text, capture: captureText },
      )
    }

    function judge(serviceResult: Proc.Result | undefined, captureProblem: string | undefined): Verdict {
      const fail = (kind: VerdictKind, cause: Verdict["cause"], reason: string): Verdict => ({ ok: false, kind, cause, reason })
      if (options.signal?.aborted) return { ok: false, ...aborted() }
      if (early) return { ok: false, ...early }
      if (!probeResult) return fail("aborted", "environment", "the probe never ran")
      const output = probeResult.output
      const printed = output.trim() ? `it printed: ${quoteOutput(output)}` : "it printed nothing"
      if (probeResult.timedOut) return fail("probe-timeout", "program", `the probe did not finish within ${Proc.seconds(spec.probe.timeoutS * 1000)} (${printed})`)
      if (probeResult.spawnError) return fail("command-missing", "spec", `the probe could not start (${probeResult.spawnError})`)
      const expect = spec.probe.expect
      if (expect.contains !== undefined && !output.includes(expect.contains)) return fail("probe-output", "program", `the probe's output lacks ${quoteOutput(expect.contains)} (${printed})`)
      if (expect.matches !== undefined && !new RegExp(expect.matches).test(output)) return fail("probe-output", "program", `the probe's output does not match /${expect.matches}/ (${printed})`)
      if (spec.probe.exitCode !== undefined && probeResult.code !== spec.probe.exitCode) return fail("probe-exit", "program", `the probe ${Proc.describe(probeResult)}, not ${spec.probe.exitCode} (${printed})`)
      if (serviceResult && endedAlone(serviceResult)) return fail("service-exited", "program", `the service ${ended(serviceResult)} while the probe ran${lastWords(serviceResult)}`)
      if (captureProblem) return fail("capture-failed", "environment", captureProblem)
      const held = [expect.contains !== undefined ? quoteOutput(expect.contains) : undefined, expect.matches !== undefined ? `/${expect.matches}/` : undefined].filter(Boolean).join(" and ")
      return { ok: true, kind: "passed", cause: "none", reason: `the probe's output holds ${held}; the service listened on ${portList(spec.ports)} after ${Proc.seconds(listenMs ?? 0)}` }
    }
  }

  /**
   * A result for people and the Debugger: the verdict, where the evidence is, and what the capture showed.
   * (A gate's failure message; the summary.txt a person opens holds the same and more.)
   */
  export function describe(result: Result): string {
    const lines = [`${result.verdict.ok ? "The service probe passed" : "The service probe failed"}: ${result.verdict.reason}.`]
    if (result.verdict.install) lines.push(`Install: ${result.verdict.install}`)
    const connections = result.report.capture?.connections ?? []
    for (const c of connections.slice(0, 3)) {
      const reply = c.toClient.firstLines.length ? `, first reply line ${JSON.stringify(c.toClient.firstLines[0])}` : ", no reply"
      lines.push(`Captured: ${CaptureSummary.endpoint(c.client)} → ${CaptureSummary.endpoint(c.server)}: ${c.toServer.bytes} bytes sent, ${c.toClient.bytes} bytes back${reply}.`)
    }
    if (result.report.capture && connections.length === 0) lines.push("Captured: no connection at all.")
    const files = Object.values(result.files)
    if (files.length) lines.push(`Evidence: ${files.join(", ")}`)
    return lines.join("\n")
  }

  /**
   * Whether a probe can run here, tools aside (`ProbeTools.find` names those with their install command):
   * the OS sandbox and the privileges. For `aircoding doctor` and the gate, before a service task waits on it.
   */
  export function readiness(env: Readonly<Record<string, string | undefined>> = process.env): { ok: true } | { ok: false; message: string; install?: string } {
    const tools = ProbeTools.find(env)
    if (!tools.ok) return { ok: false, message: tools.message, install: tools.install }
    const sandbox = Sandbox.check()
    if (!sandbox.ok) return { ok: false, message: `the service cannot be fenced: ${sandbox.message}` }
    return ProbeTools.privileges()
  }

  function aborted(): { kind: VerdictKind; cause: Verdict["cause"]; reason: string } {
    return { kind: "aborted", cause: "environment", reason: "the service probe was stopped (the run was aborted)" }
  }

  type Located = Program | { ok: false; message: string }
  type Program = { ok: true; path: string; cwd: string }

  /** The program and its working directory, checked before anything starts (a missing build names itself). */
  function locate(role: "service" | "probe", command: { command: string; cwd: string }, worktree: string, env: Readonly<Record<string, string | undefined>>): Located {
    const cwd = resolve(worktree, command.cwd)
    if (relative(worktree, cwd).startsWith("..")) return { ok: false, message: `the ${role}'s cwd ${command.cwd} is outside the worktree` }
    if (!command.command.includes("/")) {
      const found = ProbeTools.which(command.command, env)
      if (!found) return { ok: false, message: `the ${role}'s command ${command.command} is not installed (not found on PATH): install it, or name a program of the build (a path such as build/${command.command})` }
      return { ok: true, path: found, cwd }
    }
    const path = isAbsolute(command.command) ? command.command : resolve(cwd, command.command)
    try {
      accessSync(path, constants.X_OK)
    } catch {
      const shown = isAbsolute(command.command) ? path : `${command.command} (${path})`
      return { ok: false, message: `the ${role}'s command ${shown} does not exist or is not executable: build the project first, or fix ${role}.command` }
    }
    return { ok: true, path, cwd }
  }

  /**
   * Whether the service ended by itself: our stop kills its bwrap by a signal (no exit code), while bwrap
   * passes on the service's own end as an exit code (a crash by SIGSEGV is 139). Not "did it end before we
   * asked": a crash just before the stop would be taken for ours.
   */
  function endedAlone(r: Proc.Result): boolean {
    return !(r.aborted && r.code === null)
  }

  /** How a program ended, for a verdict: a wrapper's 128+N exit names the signal N. */
  function ended(r: Proc.Result): string {
    if (r.code !== null && r.code > 128) {
      const name = Object.entries(osConstants.signals).find(([, n]) => n === r.code! - 128)?.[0]
      if (name) return `exited with ${r.code} (killed by ${name})`
    }
    return Proc.describe(r)
  }

  function lastWords(r: Proc.Result): string {
    const lines = r.output.trim().split("\n").filter(Boolean).slice(-3)
    return lines.length ? `; its last output: ${quoteOutput(lines.join("\n"))}` : "; it printed nothing"
  }

  function portList(ports: readonly number[]): string {
    return `port${ports.length === 1 ? "" : "s"} ${ports.join(", ")}`
  }

  function quoteOutput(text: string): string {
    const shown = JSON.stringify(text.length > 200 ? text.slice(0, 200) + "…" : text)
    return `'${shown.slice(1, -1)}'`
  }

  function oneLine(text: string): string {
    return text.trim().split("\n").filter(Boolean).slice(-3).join(" / ")
  }

  function write(dir: string, name: string, text: string): string {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  function delay(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms).unref?.())
  }
}
