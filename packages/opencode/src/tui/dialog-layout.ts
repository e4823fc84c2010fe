import { TerminalText } from "../text/terminal-text"

/**
 * Where a prompt dialog's scrolled body must stop so the answer field stays on screen, in both languages and
 * at 80×24. The engine draws a dialog a quarter of the terminal's height from the top, with a padding row,
 * the title and a gap above the description; below it come a gap, the answer field and the footer ("enter
 * submit"), which a description one row shorter than the screen's rest still hid — measured in tmux with the
 * pinned engine at 80×24 (in Chinese, whose help wraps to more rows) and 160×48.
 */
export namespace DialogLayout {
  /** Rows of the engine's frame around a prompt's description on a terminal `height` rows high. */
  export function frameRows(height: number): number {
    return Math.ceil(height / 4) + 8
  }

  /** The dialog's text width for wrapped text: its width less the engine's two columns of padding on each side. */
  export function textWidth(dialogWidth: number): number {
    return dialogWidth - 4
  }

  /** Rows that `texts` (each possibly several lines) take when wrapped at `width` columns, CJK counted double. */
  export function wrappedRows(texts: readonly string[], width: number): number {
    return texts.flatMap((h) => h.split("\n")).reduce((n, h) => n + Math.max(1, TerminalText.wrap(h, width).length), 0)
  }

  /**
   * The plan dialog's layout: how many body rows it shows at a time, and whether the blank row between the
   * body and the help fits (a short terminal gives that row to the plan). Below the body: the "more lines"
   * row, the optional blank, the help rows.
   */
  export function plan(height: number, helpRows: number): { rows: number; spacer: boolean } {
    const free = height - frameRows(height) - 1 - helpRows
    const spacer = free - 1 >= 6
    return { rows: Math.max(3, spacer ? free - 1 : free), spacer }
  }
}
