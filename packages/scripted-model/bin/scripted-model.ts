#!/usr/bin/env bun
import { parseArgs } from "node:util"
import { loadScenario, parseChaosFlags, ScenarioError, startScriptedModel } from "../src/index.ts"

const HELP = `scripted-model: an OpenAI-compatible chat-completions server that plays a scenario file

Usage:
  scripted-model --scenario FILE [--port N] [--host H] [--log FILE]

Options:
  --scenario FILE   scenario JSON (format: packages/scripted-model/README.md)   required
  --port N          port to listen on; 0 picks a free one                        default 0
  --host H          address to bind                                             default 127.0.0.1
  --log FILE        append every request as one JSON line to FILE
  --chaos SEED      seeded random provider faults (overrides the scenario's "chaos" key)
  --faults LIST     with --chaos: fault=probability,... (default every fault at 0.02);
                    faults: rate-limit server-error unavailable overloaded context-too-long
                    unauthorized model-not-found stream-cut stall text-no-tool invalid-args
                    unoffered-tool report-twice false-success
  --help            show this help

Prints "scripted model listening on http://HOST:PORT/v1" once ready, serves until SIGINT/SIGTERM,
and prints each unexpected request (the failure message) to stderr.
Exit codes: 0 stopped by signal, 2 bad arguments or bad scenario, 1 could not start.`

function usageError(message: string): never {
  process.stderr.write(`scripted-model: ${message}\nRun scripted-model --help for usage.\n`)
  process.exit(2)
}

let values: { scenario?: string; port?: string; host?: string; log?: string; chaos?: string; faults?: string; help?: boolean }
try {
  values = parseArgs({
    options: { scenario: { type: "string" }, port: { type: "string" }, host: { type: "string" }, log: { type: "string" }, chaos: { type: "string" }, faults: { type: "string" }, help: { type: "boolean" } },
    strict: true,
  }).values
} catch (e) {
  usageError((e as Error).message)
}

if (values.help) {
  process.stdout.write(`${HELP}\n`)
  process.exit(0)
}
if (!values.scenario) usageError("--scenario FILE is required")
const port = values.port === undefined ? 0 : Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) usageError(`--port must be an integer from 0 to 65535, got "${values.port}"`)

if (values.faults !== undefined && values.chaos === undefined) usageError("--faults needs --chaos SEED")

try {
  let chaos
  if (values.chaos !== undefined) {
    try {
      chaos = parseChaosFlags(values.chaos, values.faults)
    } catch (e) {
      usageError(`--chaos/--faults: ${(e as Error).message.replace(/\s+/g, " ")}`)
    }
  }
  const model = await startScriptedModel({
    scenario: chaos ? { ...loadScenario(values.scenario), chaos } : values.scenario,
    port,
    host: values.host,
    logPath: values.log,
    onFailure: (message) => process.stderr.write(`${message}\n`),
  })
  process.stdout.write(`scripted model listening on ${model.url}\n`)
  const stop = () => {
    void model.close().finally(() => process.exit(0))
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
} catch (e) {
  if (e instanceof ScenarioError) {
    process.stderr.write(`scripted-model: ${e.message}\n`)
    process.exit(2)
  }
  process.stderr.write(`scripted-model: ${(e as Error).message}\n`)
  process.exit(1)
}
