import { PLACEHOLDER } from "./schema.ts"

/** Replaces {{name}} in every string inside `value` (recursively) with the named capture group. */
export function fillPlaceholders<T>(value: T, groups: Record<string, string | undefined>): T {
  if (typeof value === "string") return value.replace(PLACEHOLDER, (_, name: string) => groups[name] ?? "") as T
  if (Array.isArray(value)) return value.map((v) => fillPlaceholders(v, groups)) as T
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillPlaceholders(v, groups)])) as T
  }
  return value
}
