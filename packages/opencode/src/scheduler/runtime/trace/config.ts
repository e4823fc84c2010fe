import { z } from "zod"

/**
 * Whether and how a run's trace is exported, from the standard OpenTelemetry variables: an endpoint
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + /v1/traces) turns it on; the protocol
 * is http/protobuf (the standard's default) or http/json. gRPC is refused with a message: the SDK's OTLP/HTTP
 * exporters are the ones we ship. The headers (`OTEL_EXPORTER_OTLP_HEADERS`), service name and resource
 * attributes are read by the SDK itself, as the standard says.
 */
export namespace TraceConfig {
  export const PROTOCOLS = ["http/protobuf", "http/json"] as const
  /** The bounded send: an unreachable endpoint costs the run at most this (unless the standard timeout says less). */
  export const DEFAULT_TIMEOUT_MS = 5_000

  const Env = z.object({
    OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
    OTEL_EXPORTER_OTLP_PROTOCOL: z.string().optional(),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.string().optional(),
    OTEL_EXPORTER_OTLP_TIMEOUT: z.string().optional(),
    OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: z.string().optional(),
    OTEL_SERVICE_NAME: z.string().optional(),
    OTEL_TRACES_EXPORTER: z.string().optional(),
  })

  export type Config = { url: string; protocol: (typeof PROTOCOLS)[number]; timeoutMs: number; serviceName: string }

  /** undefined: no endpoint set (nothing is exported); a string: the variables are wrong, said in one line. */
  export function fromEnv(env: NodeJS.ProcessEnv = process.env): Config | string | undefined {
    const e = Env.parse(env)
    if (e.OTEL_TRACES_EXPORTER === "none") return undefined
    const traces = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
    const base = e.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
    if (!traces && !base) return undefined
    const url = traces || `${base!.replace(/\/+$/, "")}/v1/traces`
    if (!/^https?:\/\//.test(url)) return `OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL, got '${url}'`
    const protocol = (e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || e.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf").trim()
    if (protocol === "grpc")
      return "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: AirCoding exports traces over OTLP/HTTP; set it to http/protobuf or http/json (a collector's port 4318)"
    if (!(PROTOCOLS as readonly string[]).includes(protocol)) return `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: expected http/protobuf or http/json`
    const timeout = Number(e.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT || e.OTEL_EXPORTER_OTLP_TIMEOUT || DEFAULT_TIMEOUT_MS)
    const timeoutMs = Number.isFinite(timeout) && timeout > 0 ? Math.min(timeout, DEFAULT_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS
    return { url, protocol: protocol as Config["protocol"], timeoutMs, serviceName: e.OTEL_SERVICE_NAME?.trim() || "aircoding" }
  }

  /**
   * The engine's own export (its database, config and plugin spans: megabytes of plumbing per run) never goes to the
   * user's endpoint as it is: the engine child gets no OTEL_* variable of the user's, and when a trace is exported
   * its endpoint is our relay (`relayEnvironment`). `AIRCODING_OTEL_ENGINE=1` passes the user's variables through:
   * every engine span, and its logs, straight to the user's endpoint.
   */
  export function engineEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    if (env.AIRCODING_OTEL_ENGINE === "1") return env
    return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith("OTEL_")))
  }

  /** Whether the engine's spans go through our relay (trace/engine-relay.ts): a trace is exported, and not all of the engine's. */
  export function relayed(env: NodeJS.ProcessEnv): boolean {
    return typeof fromEnv(env) === "object" && env.AIRCODING_OTEL_ENGINE !== "1"
  }

  /** The engine's variables for the relay at `endpoint`: JSON bodies (the relay reads them), the user's resource attributes. */
  export function relayEnvironment(endpoint: string, env: NodeJS.ProcessEnv): Record<string, string> {
    return {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      ...(env.OTEL_RESOURCE_ATTRIBUTES ? { OTEL_RESOURCE_ATTRIBUTES: env.OTEL_RESOURCE_ATTRIBUTES } : {}),
    }
  }
}
