/**
 * How many tokens a text costs a model, estimated before the provider says (issue 38, item 5). A flat
 * "4 characters a token" is right for English prose only: a Chinese character is about a token of its own,
 * and code is dense with punctuation the tokenizers split apart. So each character is costed by its class —
 * CJK, code punctuation, markup, prose — where a line's class is read from its start (a fence, indentation,
 * a tag or a Markdown marker), never from what follows: appending text never lowers an estimate.
 * Pure: no I/O; the sessions' accounting (conversation-estimate.ts) and the budgets call it.
 */
export namespace TokenEstimate {
  export const CLASSES = ["cjk", "code", "markup", "prose"] as const
  export type ContentClass = (typeof CLASSES)[number]
  export type Estimate = { tokens: number; chars: Record<ContentClass, number> }

  /**
   * Tokens per character, by class. Measured shapes of common BPE tokenizers: English words ≈ 4–5 letters a
   * token, identifiers shorter pieces, code punctuation mostly a token per one or two characters, a CJK
   * character about one token (a rarer one more).
   */
  export const RATES = {
    cjk: 1.0,
    prose: { word: 0.23, punctuation: 0.5 },
    markup: { word: 0.28, punctuation: 0.5 },
    code: { word: 0.3, punctuation: 0.6 },
    /** Accented letters, emoji, other scripts: often split into several byte tokens. */
    other: 0.6,
  } as const

  // Han, Hiragana, Katakana, Hangul, CJK punctuation and full-width forms.
  const CJK = /[\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/
  const WORD = /[A-Za-z0-9_]/
  const SPACE = /\s/
  const MARKUP_START = /^\s*(<\/?[A-Za-z!?]|#{1,6}\s|[-*+]\s|\d+[.)]\s|>\s?|\|)/
  const CODE_START = /^(\t| {2,})\S|^\s*(#include|#define|#pragma|\/\/|\/\*|\*\s|[{}]|(int|void|auto|const|return|class|struct|namespace|template|using|static|if|for|while|def|fn|let|var|function|import|export)\b)/

  /** Line classes in the order of their rates: a later one costs at least as much per character. */
  const LINE_CLASSES = ["prose", "markup", "code"] as const
  type LineClass = (typeof LINE_CLASSES)[number]
  /** Only a line's first characters decide its class. */
  const HEAD = 40

  /** The class a line's start reads as. */
  function startClass(head: string): LineClass {
    if (CODE_START.test(head)) return "code"
    if (MARKUP_START.test(head)) return "markup"
    // A start dense with code punctuation reads as code (`x = f(y);`, `a->b[i]++`).
    const visible = head.replace(/\s/g, "").length
    const punct = head.replace(/[A-Za-z0-9_\s]/g, "").length
    return visible >= 4 && punct * 4 >= visible ? "code" : "prose"
  }

  /**
   * The class of a line: the highest its start reads as at any length up to HEAD, so a line that grows never
   * falls to a cheaper class (the estimate is monotone); inside a ``` fence every line is code.
   */
  function lineClass(line: string, fenced: boolean): LineClass {
    if (fenced) return "code"
    let best = 0
    const n = Math.min(line.length, HEAD)
    for (let i = 1; i <= n && best < LINE_CLASSES.length - 1; i++) best = Math.max(best, LINE_CLASSES.indexOf(startClass(line.slice(0, i))))
    return LINE_CLASSES[best]!
  }

  /** The estimate of `text`, with the characters of each class it counted (whitespace costs nothing). */
  export function estimate(text: string): Estimate {
    const chars: Record<ContentClass, number> = { cjk: 0, code: 0, markup: 0, prose: 0 }
    let tokens = 0
    let fenced = false
    for (const line of text.split("\n")) {
      const fence = /^\s*```/.test(line)
      // A fence line is markup, or code when it closes a fence (never cheaper than the line it grew from).
      const cls: LineClass = fence ? (fenced ? "code" : lineClass(line, false) === "code" ? "code" : "markup") : lineClass(line, fenced)
      if (fence) fenced = !fenced
      const rates = RATES[cls]
      for (const ch of line) {
        if (SPACE.test(ch)) continue
        if (CJK.test(ch)) {
          chars.cjk++
          tokens += RATES.cjk
        } else {
          chars[cls]++
          tokens += WORD.test(ch) ? rates.word : ch.charCodeAt(0) < 128 ? rates.punctuation : RATES.other
        }
      }
    }
    return { tokens: Math.ceil(tokens), chars }
  }

  /** The estimated tokens of `text`. */
  export function tokens(text: string): number {
    return estimate(text).tokens
  }
}
