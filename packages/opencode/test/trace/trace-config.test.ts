import { describe, expect, test } from "vitest"
import { LaunchConfig } from "../../src/engine/launch-config"
import { TraceConfig } from "../../src/scheduler/runtime/trace/config"

describe("TraceConfig: the standard variables decide the export", () => {
  test("no endpoint: nothing is exported; OTEL_TRACES_EXPORTER=none turns it off", () => {
    expect(TraceConfig.fromEnv({})).toBeUndefined()
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })).toBeUndefined()
  })

  test("the general endpoint gets /v1/traces; the traces endpoint is used as it is and wins", () => {
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toMatchObject({ url: "http://c:4318/v1/traces", protocol: "http/protobuf", serviceName: "aircoding" })
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:9/in" })).toMatchObject({ url: "http://t:9/in" })
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "ci-team" })).toMatchObject({ protocol: "http/json", serviceName: "ci-team" })
  })

  test("grpc, an unknown protocol and a URL that is not http are refused with a message", () => {
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toMatch(/grpc is not supported.*http\/protobuf or http\/json/)
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "thrift" })).toMatch(/expected http\/protobuf or http\/json/)
    expect(TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "c:4318" })).toMatch(/expected an http/)
  })

  test("the send is bounded: the standard timeout is kept when shorter, never longer than the default", () => {
    const timeoutOf = (t: string) => (TraceConfig.fromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_TIMEOUT: t }) as TraceConfig.Config).timeoutMs
    expect(timeoutOf("1500")).toBe(1500)
    expect(timeoutOf("60000")).toBe(TraceConfig.DEFAULT_TIMEOUT_MS)
    expect(timeoutOf("soon")).toBe(TraceConfig.DEFAULT_TIMEOUT_MS)
  })

  test("the engine AirCoding starts gets no OTEL_* variable, unless AIRCODING_OTEL_ENGINE=1", () => {
    const base = { PATH: "/bin", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SERVICE_NAME: "x" }
    const off = LaunchConfig.environment({}, base)
    expect(Object.keys(off).filter((k) => k.startsWith("OTEL_"))).toEqual([])
    expect(off.PATH).toBe("/bin")
    const on = LaunchConfig.environment({}, { ...base, AIRCODING_OTEL_ENGINE: "1" })
    expect(on.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://c:4318")
  })
})
