/**
 * service_probe_s (issue 37 item 8): one service probe from the call to its verdict, on the test's line service
 * (built once with g++, outside the timing): the loopback namespace, tcpdump up, the service listening, an
 * `nc` probe with its PING/PONG, everything stopped, the pcap read and the summary written. The median of 5
 * after one warm-up. No target yet: the issue asks for the figure.
 */
import { ServiceProbe } from "../src/scheduler/runtime/verify/service-probe"
import { makeLineServiceWorktree } from "../test/verify/line-service"
import { medianMs, registerFigure } from "./figures"

async function probeSeconds(): Promise<number> {
  const ready = ServiceProbe.readiness()
  if (!ready.ok) throw new Error(`service_probe_s: ${ready.message}`)
  const w = makeLineServiceWorktree()
  let runs = 0
  try {
    const ms = await medianMs(
      async () => {
        const result = await ServiceProbe.run(w.spec(["--port", "7000"]), { worktree: w.worktree, outDir: w.outDir(`bench-${++runs}`) })
        if (!result.verdict.ok) throw new Error(`service_probe_s: the probe failed: ${result.verdict.reason}`)
      },
      5,
      1,
    )
    return ms / 1000
  } finally {
    w.cleanup()
  }
}

registerFigure({
  name: "service_probe_s",
  description: "one service probe, call to verdict: loopback namespace, tcpdump, the g++ line service listening, an nc probe, all stopped, pcap summarised",
  unit: "s",
  run: probeSeconds,
})
