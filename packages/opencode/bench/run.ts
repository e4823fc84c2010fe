/**
 * bun run bench [--json] [--only name,name]
 * Loads every *.figures.ts beside this file, measures each figure, and prints a table (or one JSON object
 * of name → value with --json). Exits 1 when a figure misses its target, so CI can keep an eye on it.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { meetsTarget, registeredFigures } from "./figures"

const { values } = parseArgs({ options: { json: { type: "boolean", default: false }, only: { type: "string" }, "no-fail": { type: "boolean", default: false } } })
const here = import.meta.dirname ?? new URL(".", import.meta.url).pathname
for (const file of readdirSync(here).filter((f) => f.endsWith(".figures.ts")).sort()) await import(join(here, file))

const only = values.only ? new Set(values.only.split(",")) : null
const results: Record<string, number> = {}
const rows: string[][] = []
let missed = 0
for (const figure of registeredFigures()) {
  if (only && !only.has(figure.name)) continue
  if (!values.json) process.stderr.write(`measuring ${figure.name} …\n`)
  const value = await figure.run()
  results[figure.name] = Math.round(value * 1000) / 1000
  const ok = meetsTarget(figure, value)
  if (ok === false) missed++
  rows.push([
    figure.name,
    formatValue(value, figure.unit),
    figure.target ? `${figure.target.op} ${figure.target.value}` : "",
    ok === null ? "" : ok ? "ok" : "MISSED",
    figure.description,
  ])
}

if (values.json) {
  console.log(JSON.stringify(results))
} else {
  const header = ["figure", "value", "target", "", "what"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd()
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const row of rows) console.log(line(row))
}
process.exit(missed > 0 && !values["no-fail"] ? 1 : 0)

function formatValue(value: number, unit: string): string {
  const digits = value >= 100 ? 0 : value >= 1 ? 1 : 3
  return `${value.toFixed(digits)} ${unit}`
}
