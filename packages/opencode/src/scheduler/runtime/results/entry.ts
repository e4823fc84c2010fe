import { z } from "zod"
import { JUnit } from "./junit.ts"
import { ResultKey } from "./key.ts"

/**
 * One recorded result: the build and the tests of one key, passed. Only passes are recorded, so only
 * passes are ever reused: a failure (a real one, or a flaky test's bad run) always runs again, and a
 * flaky test gets a recorded pass only from a run where it passed.
 */
export namespace ResultEntry {
  /** What a test's binaries were when it passed (test selection compares them; `selection.ts`). */
  export const TestPrint = z.object({ name: z.string().min(1), print: z.string().min(1) }).strict()

  export const Body = z
    .object({
      version: z.literal(1),
      key: z.string().regex(/^[0-9a-f]{64}$/),
      /** The commit whose tree was built (any commit with the same build inputs has the same key). */
      commit: z.string().min(1),
      at: z.string(),
      /** Who produced it: the run's place (a gate, the baseline, the final check) and the tools' versions. */
      producer: z.object({ by: z.string(), host: z.string(), tools: z.record(z.string(), z.string()) }).strict(),
      build: z.object({ ms: z.number().int().nonnegative() }).strict(),
      test: z.object({ ms: z.number().int().nonnegative(), source: z.enum(["junit", "ctest-output", "none"]), tests: JUnit.Results }).strict(),
      /** Per CTest test, the hash of what it ran (for selection on later keys); absent when not computed. */
      prints: z.array(TestPrint).optional(),
    })
    .strict()
  export type Body = z.infer<typeof Body>

  export const Entry = Body.extend({ checksum: z.string().regex(/^[0-9a-f]{64}$/) }).strict()
  export type Entry = z.infer<typeof Entry>

  export function seal(body: Body): Entry {
    return sealed(Body.parse(body))
  }

  /** An entry read from a store, checked as every kind is (`openSealed`), and with no failed test. */
  export function open(text: string, key: string): { entry?: Entry; problem?: string } {
    const opened = openSealed(text, key, Entry, "a results entry")
    if (opened.entry && JUnit.failed(opened.entry.test.tests).length > 0) return { problem: "records a failing test" }
    return opened
  }

  /** A checked body with its checksum: how every kind of entry is stored (build and tests here, analysis). */
  export function sealed<B extends object>(checked: B): B & { checksum: string } {
    return { ...checked, checksum: ResultKey.hash(ResultKey.canonical(checked)) }
  }

  /**
   * An entry of any kind read from a store, checked: JSON, its schema, the checksum over its body (a torn
   * write, a bit flip, a hand edit) and the key it was asked for. Undefined with the reason otherwise.
   */
  export function openSealed<E extends { checksum: string; key: string }>(text: string, key: string, schema: z.ZodType<E>, kind: string): { entry?: E; problem?: string } {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      return { problem: "not JSON" }
    }
    const parsed = schema.safeParse(json)
    if (!parsed.success) return { problem: `not ${kind}` }
    const { checksum, ...body } = parsed.data
    if (ResultKey.hash(ResultKey.canonical(body)) !== checksum) return { problem: "checksum mismatch" }
    if (parsed.data.key !== key) return { problem: `recorded for another key (${parsed.data.key.slice(0, 12)})` }
    return { entry: parsed.data }
  }
}
