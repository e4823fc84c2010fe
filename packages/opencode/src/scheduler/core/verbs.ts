/**
 * Verbs that say "make it better" without saying what changes. A task worded with one is acceptable only
 * when its write-set spells out what happens to each file and it names at least one thing to keep.
 */
const ENGLISH_FORMS = [
  "cleanup cleanups",
  "optimise optimises optimised optimising optimize optimizes optimized optimizing optimisation optimization",
  "tidy tidies tidied tidying",
  "update updates updated updating",
  "refactor refactors refactored refactoring",
  "improve improves improved improving improvement",
  "polish polishes polished polishing",
  "rework reworks reworked reworking",
  "tweak tweaks tweaked tweaking",
  "enhance enhances enhanced enhancing",
  "streamline streamlines streamlined streamlining",
  "simplify simplifies simplified simplifying",
  "modernise modernises modernised modernising modernize modernizes modernized modernizing",
]
  .join(" ")
  .split(" ")
const ENGLISH = new Set(ENGLISH_FORMS)
/** "clean up", "cleaning up": the verb only counts with its particle. */
const CLEAN = new Set(["clean", "cleans", "cleaned", "cleaning"])
/** Every form above starts with one of these: most titles contain none, and are done with in a few scans. */
const STEMS = ["clean", "optimi", "tid", "updat", "refactor", "improv", "polish", "rework", "tweak", "enhanc", "streamlin", "simplif", "moderni"]
const CHINESE = ["清理", "优化", "整理", "更新", "改进", "完善", "调整", "重构", "改善"]

/**
 * "Refactor" names a task kind whose rules make it exact — behaviour kept, the tests unchanged and green —
 * so in a refactor task it is no vague verb.
 */
export const REFACTOR_FORMS: ReadonlySet<string> = new Set(["refactor", "refactors", "refactored", "refactoring", "重构"])

/**
 * The first ambiguous verb in the text, or null; words in `except` do not count. Word by word: this runs
 * for every task of a 10,000-task graph.
 */
export function findAmbiguousVerb(text: string, except?: ReadonlySet<string>): string | null {
  for (const word of CHINESE) if (text.includes(word) && !except?.has(word)) return word
  const lower = text.toLowerCase()
  if (!STEMS.some((stem) => lower.includes(stem))) return null
  const words = lower.split(/[^a-z]+/)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (ENGLISH.has(word) && !except?.has(word)) return word
    if (CLEAN.has(word) && words[i + 1] === "up") return `${word} up`
  }
  return null
}
