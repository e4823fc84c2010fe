import { existsSync, readdirSync } from "node:fs"
import { Strict } from "../scheduler/core/strict"
import { TraceConfig } from "../scheduler/runtime/trace/config"
import { TraceExport } from "../scheduler/runtime/trace/exporter"
import { Args } from "./args"
import { Help } from "./help"
import { UsageError } from "./ui"
import { AirPaths } from "../scheduler/core/air-paths"

const TRACES_HELP = `aircoding traces — send a run's trace to an OpenTelemetry collector again

Usage:
  aircoding traces export [dir] [--run ID]

Derives the run's trace from its event log (one trace per run: the run, its phases, tasks, attempts,
sessions, gates, merges, final check and deploys as spans) and sends it over OTLP/HTTP to the endpoint
the standard variables name: OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf or http/json; grpc is refused),
OTEL_SERVICE_NAME (default aircoding), OTEL_RESOURCE_ATTRIBUTES. The ids are derived from the run's id:
sending a run again sends the same trace. A run sends its trace by itself when it ends; this is for a
run whose send was dropped, or an archived one.
  --run ID   the run with this id: the current run's, or one archived under ${AirPaths.ARCHIVE}/<ID>/
             (default: the current run in dir)
Exit codes: 0 sent, 1 no such run, no endpoint set, the send dropped (recorded in ${AirPaths.TRACE_RECORD}),
or a usage error.
`

export function tracesCommand(argv: string[]): Promise<number> {
  return Args.guard(() => traces(argv))
}

async function traces(argv: string[]): Promise<number> {
  const { values, positionals } = Args.parse("traces", argv, { run: { type: "string" } } as const, 2)
  const [verb, dirArg] = positionals
  if (values.help) return Args.print(Help.say(TRACES_HELP))
  if (!verb) throw new UsageError("say what to do: export", "traces")
  if (verb !== "export") {
    const near = Strict.nearest(verb, ["export"])
    throw new UsageError(`unknown verb '${verb}'${near ? `; did you mean ${near}?` : " (export)"}`, "traces")
  }
  const root = Args.projectDir(dirArg, "traces")
  const config = TraceConfig.fromEnv()
  if (config === undefined) {
    process.stderr.write("aircoding traces: no endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://127.0.0.1:4318) or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT\n")
    return 1
  }
  if (typeof config === "string") {
    process.stderr.write(`aircoding traces: ${config}\n`)
    return 1
  }
  const runId = values.run as string | undefined
  let derived = TraceExport.spansOf(TraceExport.currentRun(root))
  if (runId && derived?.runId !== runId) derived = TraceExport.spansOf(TraceExport.archivedRun(root, runId))
  if (!derived) {
    const archive = AirPaths.archive(root)
    const known = existsSync(archive) ? readdirSync(archive) : []
    process.stderr.write(
      runId
        ? `aircoding traces: no run ${runId} in ${root} (neither the current run nor archived${known.length ? `; archived: ${known.join(", ")}` : ""})\n`
        : `aircoding traces: no run in ${root} (no ${AirPaths.EVENTS})\n`,
    )
    return 1
  }
  const outcome = (await TraceExport.send(derived, root))!
  if (!outcome.sent) {
    process.stderr.write(`aircoding traces: ${outcome.spans} spans of run ${derived.runId} dropped: ${outcome.reason}\n`)
    return 1
  }
  process.stdout.write(`sent the trace of run ${derived.runId}: ${outcome.spans} spans, trace id ${outcome.traceId}, to ${config.url}\n`)
  return 0
}
