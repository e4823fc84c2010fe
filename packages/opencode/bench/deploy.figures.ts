/**
 * deploy_verify_s: one deploy of the demo's sample (samples/cpp-calc, built with cmake beforehand) to a local
 * SSH target — a real sshd on 127.0.0.1 (test/support/sshd.ts) — with transfer, SHA-256 check, switch,
 * restart of a pidfile service, wait active and smoke test (the sample's test binary run on the target).
 * deploy_overhead_ratio: the part of that time spent outside the project's own commands (restart, status,
 * smoke): staging, ssh connection, copy, hashes, switch, evidence. Needs root (sshd's test config).
 */
import { spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Paths } from "../src/engine"
import { Deploy } from "../src/scheduler/runtime/deploy/deploy"
import { DeployRules } from "../src/scheduler/runtime/deploy/rules"
import { connectionTo, pidfileService, startSshd } from "../test/support/sshd"
import { registerFigure } from "./figures"

let measured: Promise<{ seconds: number; share: number }> | undefined

function measure(): Promise<{ seconds: number; share: number }> {
  measured ??= (async () => {
    if (process.getuid?.() !== 0) throw new Error("deploy_verify_s: the local sshd target needs root")
    const root = mkdtempSync(join(tmpdir(), "air-bench-deploy-"))
    const sshd = await startSshd()
    const service = pidfileService(sshd.targetDir)
    try {
      cpSync(join(Paths.samples, "cpp-calc"), root, { recursive: true })
      for (const args of [["-S", ".", "-B", ".air-build"], ["--build", ".air-build"]]) {
        const r = spawnSync("cmake", args, { cwd: root, encoding: "utf8" })
        if (r.status !== 0) throw new Error(`deploy_verify_s: cmake ${args.join(" ")} failed: ${r.stderr}`)
      }
      const target = DeployRules.Target.parse({
        name: "local",
        ...connectionTo(sshd),
        artefacts: { paths: [".air-build/test_calc", ".air-build/libcalc.a"] },
        remoteDir: join(sshd.targetDir, "calc"),
        restart: { ...service.restart, start: `(setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > ${service.pid}; echo v > ${service.running})` },
        smoke: "./.air-build/test_calc",
        stepTimeoutMs: 60_000,
      })
      const o = await Deploy.run({ root, target, n: 1, commit: "bench0000000" })
      if (o.status !== "passed") throw new Error(`deploy_verify_s: the deploy failed: ${o.message}`)
      return { seconds: o.ms / 1000, share: (o.ms - o.projectMs) / o.ms }
    } finally {
      service.kill()
      await sshd.stop()
      rmSync(root, { recursive: true, force: true })
    }
  })()
  return measured
}

registerFigure({
  name: "deploy_verify_s",
  description: "one deploy of the demo's sample to a local SSH target: transfer, SHA-256 check, switch, restart, wait active, smoke",
  unit: "s",
  run: async () => (await measure()).seconds,
})

registerFigure({
  name: "deploy_overhead_ratio",
  description: "share of deploy_verify_s spent outside the project's own commands (restart, status, smoke)",
  unit: "ratio",
  run: async () => (await measure()).share,
})
