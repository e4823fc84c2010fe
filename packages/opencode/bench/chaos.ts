/**
 * bun run chaos --seeds N [--from S] [--faults a,b] [--scenario demo|four|both] [--rate P] [--parallel K] [--bound SECONDS] [--keep] [--json]
 * Runs the demo and/or the 4-task, 2-phase scenario headless under the scripted model's seeded faults, one
 * real `aircoding run` per seed (questions answered with --resume --answer up to a bound), and checks the
 * invariant for each (test/support/chaos.ts). Prints one line per seed and a summary grouped by cause;
 * exits 1 when a seed broke the invariant.
 */
import { parseArgs } from "node:util"
import { FAULTS, type FaultName } from "@aircoding/scripted-model"
import { Chaos } from "../test/support/chaos"

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "10" },
    from: { type: "string", default: "1" },
    faults: { type: "string" },
    scenario: { type: "string", default: "both" },
    rate: { type: "string" },
    parallel: { type: "string", default: "2" },
    bound: { type: "string", default: "300" },
    keep: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  },
})
const faults = values.faults ? (values.faults.split(",").map((f) => f.trim()) as FaultName[]) : undefined
const unknown = faults?.filter((f) => !(FAULTS as readonly string[]).includes(f)) ?? []
if (unknown.length) {
  process.stderr.write(`chaos: unknown fault(s) ${unknown.join(", ")}; the faults are: ${FAULTS.join(", ")}\n`)
  process.exit(2)
}
const scenarios: Chaos.ScenarioName[] = values.scenario === "both" ? ["demo", "four"] : [values.scenario as Chaos.ScenarioName]
if (!scenarios.every((s) => s in Chaos.SCENARIOS)) {
  process.stderr.write(`chaos: --scenario is demo, four or both\n`)
  process.exit(2)
}
const n = Number(values.seeds)
const from = Number(values.from)
const runs: Chaos.Options[] = []
for (let i = 0; i < n; i++) runs.push({ seed: from + i, scenario: scenarios[i % scenarios.length]!, faults, rate: values.rate ? Number(values.rate) : undefined, keep: values.keep, processMs: Number(values.bound) * 1000 })
const verdicts = await Chaos.runMany(runs, Number(values.parallel), (v) => {
  if (!values.json) process.stdout.write(`${Chaos.describe(v)}\n`)
})
if (values.json) process.stdout.write(`${JSON.stringify(verdicts.map(({ rounds, ...v }) => ({ ...v, exits: rounds.map((r) => (r.timedOut ? "hang" : r.code)) })), null, 2)}\n`)
else process.stdout.write(`\n${Chaos.summary(verdicts)}\n`)
process.exit(verdicts.every((v) => v.ok) ? 0 : 1)
