import type { Context } from "hono"
import { RunMetrics } from "../read/run-metrics"
import { Prometheus } from "./prometheus"

/** The `/metrics` handler of the dashboard and of `aircoding metrics`: the run in `root`, in Prometheus' format. */
export function metricsHandler(root: string): (c: Context) => Promise<Response> {
  const source = new RunMetrics.Source(root)
  return async (c) => c.body(await Prometheus.exposition(source.figures()), 200, { "content-type": Prometheus.CONTENT_TYPE })
}
