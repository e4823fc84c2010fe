import { Counter, Gauge, Histogram, Registry } from "prom-client"
import type { RunMetrics } from "../read/run-metrics"

/**
 * A run's figures in Prometheus' text format, through prom-client. A fresh registry per scrape: every value is
 * derived from the log again, so the exposition is the log's, whatever process serves it and however often it
 * restarted. The names are the README's list (section "Metrics"); a change there is a change here.
 */
export namespace Prometheus {
  export const CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE

  const GATE_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600]
  const MERGE_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600]

  export function exposition(f: RunMetrics.Figures): Promise<string> {
    const registers = [new Registry()]
    const gauge = (name: string, help: string, value: number) => new Gauge({ name, help, registers }).set(value)

    new Gauge({ name: "aircoding_run_info", help: "The run being measured: its id and status word (value 1)", labelNames: ["run_id", "status"], registers }).set(
      { run_id: f.runId ?? "", status: f.status },
      1,
    )
    new Counter({ name: "aircoding_events_total", help: "Events in the run's log", registers }).inc(f.events)

    const tasks = new Gauge({ name: "aircoding_tasks", help: "Tasks of the run by state", labelNames: ["state"], registers })
    for (const [state, n] of Object.entries(f.tasksByState)) tasks.set({ state }, n)

    const gates = new Histogram({ name: "aircoding_gate_duration_seconds", help: "Gate runs by gate and outcome (from each gate run's report)", labelNames: ["gate", "outcome"], buckets: GATE_BUCKETS, registers })
    for (const g of f.gateRuns) gates.observe({ gate: g.gate, outcome: g.passed ? "passed" : "failed" }, g.seconds)

    gauge("aircoding_merge_queue_depth", "Tasks waiting in the merge queue", f.mergeQueueDepth)
    gauge("aircoding_merges_in_flight", "Tasks in the merge being built and tested now", f.mergesInFlight)
    const merges = new Histogram({ name: "aircoding_merge_duration_seconds", help: "Merges from start to outcome, by outcome", labelNames: ["outcome"], buckets: MERGE_BUCKETS, registers })
    for (const m of f.merges) merges.observe({ outcome: m.outcome }, m.seconds)
    const waits = new Histogram({ name: "aircoding_merge_queue_wait_seconds", help: "Time tasks spent in the merge queue", buckets: MERGE_BUCKETS, registers })
    for (const s of f.mergeWaits) waits.observe(s)

    const requests = new Counter({ name: "aircoding_model_requests_total", help: "Model requests by role (the agent that made them)", labelNames: ["role"], registers })
    for (const [role, n] of Object.entries(f.requestsByRole)) requests.inc({ role }, n)
    const tokens = new Counter({ name: "aircoding_model_tokens_total", help: "Model tokens by role, as the engine reported them", labelNames: ["role"], registers })
    for (const [role, n] of Object.entries(f.tokensByRole)) tokens.inc({ role }, n)
    const modelTokens = new Counter({ name: "aircoding_model_tokens_by_model_total", help: "Model tokens by role and model (the engine's provider/model; 'unreported' in logs from before models were kept)", labelNames: ["role", "model"], registers })
    const cost = new Counter({ name: "aircoding_model_cost_usd_total", help: "Cost in USD by role and model, as the engine priced the requests (only pairs with a price: no made-up zero)", labelNames: ["role", "model"], registers })
    const unpriced = new Counter({ name: "aircoding_model_unpriced_requests_total", help: "Requests to a model with no price, by role and model: their cost is unknown", labelNames: ["role", "model"], registers })
    for (const u of f.usageByModel) {
      const labels = { role: u.role, model: u.model }
      modelTokens.inc(labels, u.tokens)
      if (u.costUsd !== null) cost.inc(labels, u.costUsd)
      if (u.unpriced > 0) unpriced.inc(labels, u.unpriced)
    }

    new Counter({ name: "aircoding_rate_limit_pauses_total", help: "Times a provider rate limit paused the run", registers }).inc(f.rateLimitPauses)
    new Counter({ name: "aircoding_rate_limit_pause_seconds_total", help: "Seconds of pause the provider asked for, summed", registers }).inc(f.rateLimitPauseSeconds)
    gauge("aircoding_rate_limited", "1 while a rate limit pauses the run", f.rateLimited ? 1 : 0)

    if (f.jobs) {
      gauge("aircoding_jobs_size", "The run's job budget for builds and tests", f.jobs.size)
      gauge("aircoding_jobs_in_use", "Jobs of the budget in use now", f.jobs.inUse)
      gauge("aircoding_jobs_waiting", "Build and test commands waiting for jobs", f.jobs.waiting)
    }

    gauge("aircoding_questions_waiting", "Questions waiting for a person's answer", f.questionsWaiting)
    gauge("aircoding_question_oldest_age_seconds", "Age of the oldest question waiting (0 when none waits)", f.oldestQuestionSeconds)
    new Counter({ name: "aircoding_budgets_spent_total", help: "Budgets the run spent (budget.spent events)", registers }).inc(f.budgetsSpent)

    new Counter({ name: "aircoding_notifications_sent_total", help: "Notifications delivered", registers }).inc(f.notifications.sent)
    new Counter({ name: "aircoding_notifications_dropped_total", help: "Notifications given up after their retries", registers }).inc(f.notifications.dropped)

    new Counter({ name: "aircoding_trace_spans_exported_total", help: "Spans of the run's trace the OTLP endpoint took", registers }).inc(f.traceSpans.sent)
    new Counter({ name: "aircoding_trace_spans_dropped_total", help: "Spans of the run's trace dropped (endpoint unreachable, refused, or the bounded send ran out)", registers }).inc(f.traceSpans.dropped)

    return registers[0]!.metrics()
  }
}
