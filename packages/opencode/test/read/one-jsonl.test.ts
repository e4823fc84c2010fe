import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * One JSONL reader and writer (issue 42 item 3): src/scheduler/runtime/store/jsonl.ts. A file that splits text
 * into lines and parses each as JSON, or opens a file to append to it, is a second one: it would handle a torn
 * last line, a blank line or an interleaved write its own way. This check reads every file of src/.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const THE_ONE = "scheduler/runtime/store/jsonl.ts"

/** Files that may do part of it, each with its reason. */
const ALLOWED: Record<string, string> = {
  "scheduler/runtime/store/store.ts": "holds the events log's descriptor open (opened for append) and writes every line through JsonLines.append(fd)",
}

/** Text split into lines by hand. */
const SPLITS_LINES = /\.split\(\s*(?:"\\n"|'\\n'|`\\n`|\/\\r\?\\n\/|\/\\n\/|\/\\r\\n\|\\n\/)\s*\)/
/** A JSON parse within this many lines after the split: the split's lines are records. */
const NEAR = 8
/** A file opened to append to: a hand-made writer of lines. */
const APPENDS = /\bappendFile(?:Sync)?\(|openSync\([^)]*,\s*["']a\+?["']\s*\)|createWriteStream\([^)]*flags:\s*["']a/

/** A file that names a JSON-lines file: a split of lines in it is likely that file's lines. */
const NAMES_JSONL = /\.jsonl\b/
/** Lines split to cut a message (its first line, its last three): no records. */
const CUTS_TEXT = /\.split\([^)]*\)\s*(?:\.slice\(|\[\d+\])/

/** The hand-made JSONL readers and writers of `text`, as `line N: <what>`. */
function handMadeJsonl(text: string): string[] {
  const lines = text.split("\n")
  const found: string[] = []
  const namesJsonl = NAMES_JSONL.test(text)
  lines.forEach((line, i) => {
    if (SPLITS_LINES.test(line) && ((namesJsonl && !CUTS_TEXT.test(line)) || lines.slice(i, i + NEAR + 1).some((l) => /JSON\.parse\(/.test(l))))
      found.push(`line ${i + 1}: splits lines ${namesJsonl ? "in a file that names a .jsonl file" : "and parses them as JSON"}: ${line.trim()}`)
    if (APPENDS.test(line)) found.push(`line ${i + 1}: appends to a file by hand: ${line.trim()}`)
  })
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sourceFiles(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : []))
}

describe("one JSONL reader and writer: store/jsonl.ts", () => {
  test("finds a hand-made reader and writer, and lets a line split for other reasons through (planted examples)", () => {
    expect(handMadeJsonl('const records = text.split("\\n").filter(Boolean).map((l) => JSON.parse(l))')).toHaveLength(1)
    expect(
      handMadeJsonl(['const lines = (await readFile(file, "utf8"))', "  .split(/\\r?\\n/)", "  .flatMap((line) => {", "    try {", "      return [JSON.parse(line)]"].join("\n")),
    ).toHaveLength(1)
    // A line reader in a file about events.jsonl, its JSON parse further down (runtime/store/run-data.ts had one).
    expect(handMadeJsonl(['// follows events.jsonl', 'const parts = (this.rest + chunk).split("\\n")'].join("\n"))).toHaveLength(1)
    expect(handMadeJsonl('await appendFile(file, JSON.stringify(record) + "\\n")')).toHaveLength(1)
    expect(handMadeJsonl('const fd = fs.openSync(file, "a")')).toHaveLength(1)
    expect(handMadeJsonl('return text.trim().split("\\n").slice(-3).join(" | ")')).toEqual([])
    expect(handMadeJsonl('// events.jsonl\nconst first = message.split("\\n")[0]')).toEqual([])
    expect(handMadeJsonl('const config = JSON.parse(readFileSync(file, "utf8"))')).toEqual([])
  })

  test("no file of src/ but jsonl.ts reads or writes JSON lines by hand", () => {
    const found = sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((name) => name !== THE_ONE && !(name in ALLOWED))
      .flatMap((name) => handMadeJsonl(readFileSync(join(SRC, name), "utf8")).map((hit) => `src/${name} ${hit}`))
    // Use JsonLines.read (a file), JsonLines.Tail (a file as it grows), JsonLines.parse (a process's output)
    // or JsonLines.append (one record, one write).
    expect(found).toEqual([])
  })

  test("each allowed file still needs its exception (a stale one would hide a second writer)", () => {
    for (const [name, why] of Object.entries(ALLOWED)) expect(handMadeJsonl(readFileSync(join(SRC, name), "utf8")), `${name}: ${why}`).not.toEqual([])
  })
})
