/**
 * Text for a terminal: widths in columns (CJK and full-width characters take two), cutting, padding and
 * wrapping to them, and the times the views print. No words of the catalogue: those are the views'.
 */
export namespace TerminalText {
  export function firstLine(text: string): string {
    return text.split(/\r?\n/).find((l) => l.trim()) ?? ""
  }

  export function oneLine(text: string, max: number): string {
    const flat = text.replace(/\s+/g, " ").trim()
    return displayWidth(flat) <= max ? flat : truncate(flat, max)
  }

  /** Terminal columns: CJK and full-width characters take two. */
  export function displayWidth(text: string): number {
    let w = 0
    for (const ch of text) w += wide(ch.codePointAt(0)!) ? 2 : 1
    return w
  }

  function wide(cp: number): boolean {
    return (
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x20000 && cp <= 0x3fffd)
    )
  }

  export function truncate(text: string, max: number): string {
    if (displayWidth(text) <= max) return text
    let out = ""
    let w = 0
    for (const ch of text) {
      const cw = wide(ch.codePointAt(0)!) ? 2 : 1
      if (w + cw > max - 1) break
      out += ch
      w += cw
    }
    return out + "…"
  }

  /** The longest start of text that fits `width` columns (at least one character, so a loop over it ends). */
  function fit(text: string, width: number): string {
    let out = ""
    let w = 0
    for (const ch of text) {
      const cw = wide(ch.codePointAt(0)!) ? 2 : 1
      if (w + cw > width && out) break
      out += ch
      w += cw
    }
    return out
  }

  export function pad(text: string, width: number): string {
    return text + " ".repeat(Math.max(0, width - displayWidth(text)))
  }

  /** "2026-11-29T09:00:05.000Z" → "2026-11-29 09:00:05Z" */
  export function stamp(at: string | null): string {
    if (!at) return "—"
    const d = new Date(at)
    if (Number.isNaN(d.getTime())) return at
    return d.toISOString().slice(0, 19).replace("T", " ") + "Z"
  }

  /** Word-wraps text to width columns (CJK characters break anywhere); later lines start with indent. */
  export function wrap(text: string, width: number, indent = ""): string[] {
    const out: string[] = []
    let line = ""
    for (const token of text.match(/[\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uffe6]|\s+|[^\s\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uffe6]+/g) ?? []) {
      if (displayWidth(line + token) <= width) {
        line += token
        continue
      }
      if (line.trim()) out.push(line.trimEnd())
      line = indent + (/^\s+$/.test(token) ? "" : token)
      // A word longer than the line (a path, a URL) is broken where the line ends, and goes on on the next line:
      // nothing of it is lost, and no "…" says it was cut, because it was not.
      while (displayWidth(line) > width && width > displayWidth(indent)) {
        const head = fit(line, width)
        out.push(head)
        line = indent + line.slice(head.length)
      }
    }
    if (line.trim()) out.push(line.trimEnd())
    return out
  }

  /** "HH:MM:SS" in UTC, so the same log reads the same everywhere. */
  export function clock(at: string): string {
    const d = new Date(at)
    return Number.isNaN(d.getTime()) ? at : d.toISOString().slice(11, 19)
  }
}
