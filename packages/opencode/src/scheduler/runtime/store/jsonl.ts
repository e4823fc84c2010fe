import * as fs from "node:fs"
import { dirname } from "node:path"
import type { z } from "zod"

/**
 * JSON lines as AirCoding keeps them (events.jsonl, requests.jsonl, guard.jsonl): one reader and one writer.
 * A record is one line, written with a single write so two writers never interleave within a line; a line
 * without its newline at the end of a file is one a killed process was writing (torn), never fatal.
 */
export namespace JsonLines {
  /** One line of a buffer: its text, its bytes [start, end) without the newline, and whether a newline ends it. */
  export interface Line {
    text: string
    start: number
    end: number
    complete: boolean
  }

  /** The lines of `buffer` from byte `from`, blank ones included (a caller may need their bytes). */
  export function* lines(buffer: Buffer, from = 0): Generator<Line> {
    let offset = from
    while (offset < buffer.length) {
      const newline = buffer.indexOf(10, offset)
      const end = newline === -1 ? buffer.length : newline
      yield { text: buffer.toString("utf8", offset, end), start: offset, end, complete: newline !== -1 }
      offset = end + 1
    }
  }

  /** The records of a file that `schema` accepts, in order: a torn, damaged or foreign line is skipped. */
  export function readValid<S extends z.ZodType>(file: string, schema: S): z.infer<S>[] {
    return read<unknown>(file).flatMap((raw) => {
      const parsed = schema.safeParse(raw)
      return parsed.success ? [parsed.data as z.infer<S>] : []
    })
  }

  /** The records of a file, in order. A missing file has none; a torn or damaged line is skipped. */
  export function read<T>(file: string): T[] {
    let buffer: Buffer
    try {
      buffer = fs.readFileSync(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
      throw error
    }
    const out: T[] = []
    for (const line of lines(buffer)) {
      if (!line.text.trim()) continue
      try {
        out.push(JSON.parse(line.text) as T)
      } catch {
        // a torn line
      }
    }
    return out
  }

  /** One complete line of a file read as it grows, numbered from where reading started (1 is the first). */
  export interface NumberedLine {
    text: string
    lineNo: number
  }

  /**
   * A file read as it grows (a view following events.jsonl): each `read` returns the complete lines appended
   * since the last one. A line still without its newline (being written, or torn by a crash) waits, so a
   * UTF-8 character is never cut in two.
   */
  export class Tail {
    lineNo = 0

    constructor(
      readonly file: string,
      /** The byte after the last complete line read. */
      public offset = 0,
    ) {}

    /** The new complete lines, blank ones skipped; "reset" when the file shrank (a new run replaced it). */
    read(): NumberedLine[] | "reset" {
      let size: number
      try {
        size = fs.statSync(this.file).size
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
        throw error
      }
      if (size < this.offset) return "reset"
      if (size === this.offset) return []
      const buffer = Buffer.alloc(size - this.offset)
      const fd = fs.openSync(this.file, "r")
      try {
        fs.readSync(fd, buffer, 0, buffer.length, this.offset)
      } finally {
        fs.closeSync(fd)
      }
      const out: NumberedLine[] = []
      let consumed = 0
      for (const line of lines(buffer)) {
        if (!line.complete) break
        consumed = line.end + 1
        this.lineNo++
        if (line.text.trim()) out.push({ text: line.text, lineNo: this.lineNo })
      }
      this.offset += consumed
      return out
    }

    /** Bytes after the last complete line: a line being written now, or torn by a crash. */
    hasPartialLine(): boolean {
      try {
        return fs.statSync(this.file).size > this.offset
      } catch {
        return false
      }
    }
  }

  /** The records of JSON-lines text (a process's output), in order; a line that is not JSON is skipped. */
  export function parse<T>(text: string): T[] {
    const out: T[] = []
    for (const line of lines(Buffer.from(text))) {
      if (!line.text.trim()) continue
      try {
        out.push(JSON.parse(line.text) as T)
      } catch {
        // not a record: a line of other output
      }
    }
    return out
  }

  /** Every line of a process's output with its record, `undefined` when the line is not JSON (a tool's own text). */
  export function* mixed(text: string): Generator<{ text: string; record: unknown }> {
    for (const line of lines(Buffer.from(text))) {
      const raw = line.text.replace(/\r$/, "")
      let record: unknown
      if (raw.startsWith("{")) {
        try {
          record = JSON.parse(raw)
        } catch {
          // a line of other output that happens to start with a brace
        }
      }
      yield { text: raw, record }
    }
  }

  /** The bytes of `record` as one line. */
  export function encode(record: unknown): Buffer {
    return Buffer.from(`${JSON.stringify(record)}\n`)
  }

  /**
   * Appends `record` as one line to an open descriptor or to a file (created with its directory), in one
   * write. `fsync`: on disk before this returns, for a log others act on (events.jsonl: no side effect may run
   * for an event a crash could lose); records kept for reading only need not wait for the disk. Returns the bytes.
   */
  export function append(target: number | string, record: unknown, options: { fsync: boolean }): Buffer {
    const line = encode(record)
    if (typeof target === "number") {
      writeAll(target, line, options.fsync)
      return line
    }
    fs.mkdirSync(dirname(target), { recursive: true })
    const fd = fs.openSync(target, "a")
    try {
      writeAll(fd, line, options.fsync)
    } finally {
      fs.closeSync(fd)
    }
    return line
  }

  function writeAll(fd: number, line: Buffer, fsync: boolean): void {
    fs.writeSync(fd, line)
    if (fsync) fs.fsyncSync(fd)
  }
}
