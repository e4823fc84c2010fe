import { detectLang, KEYS, langOf, LANGS, t as word, tOr as wordOr, type Key as WordKey, type Lang, type Params } from "../text/words"

/**
 * The language rule. The setting is "auto" (speak to the user in the language they write in) or a
 * locked BCP-47 tag ("zh-CN", "en", …). Prompts get the rule as a paragraph (`{{language_rule}}`);
 * texts written by code (guard refusals, progress messages) come from the one catalogue of words,
 * src/text/words.ts, in English and Simplified Chinese.
 */
export namespace Language {
  export type Setting = "auto" | (string & {})
  /** The languages the catalog has. */
  export type Catalog = Lang
  export const CATALOGS: readonly Catalog[] = LANGS

  const BCP47 = /^[a-zA-Z]{2,3}(-[a-zA-Z]{4})?(-([a-zA-Z]{2}|[0-9]{3}))?(-[a-zA-Z0-9]{5,8})*$/

  /** Checks a setting: "auto" or a BCP-47 tag; anything else is an error that names the value. */
  export function parse(value: unknown): Setting {
    if (value === undefined || value === null || value === "") return "auto"
    if (typeof value !== "string") throw new Error(`language must be "auto" or a language tag such as "zh-CN" or "en", not ${JSON.stringify(value)}`)
    const v = value.trim()
    if (v.toLowerCase() === "auto") return "auto"
    if (!BCP47.test(v)) throw new Error(`language must be "auto" or a language tag such as "zh-CN" or "en", not ${JSON.stringify(value)}`)
    // Canonical case: language lower, script title, region upper (zh-hans-cn → zh-Hans-CN).
    return v
      .split("-")
      .map((part, i) => (i === 0 ? part.toLowerCase() : part.length === 2 ? part.toUpperCase() : part.length === 4 ? part[0]!.toUpperCase() + part.slice(1).toLowerCase() : part))
      .join("-")
  }

  const NAMES: Record<string, string> = {
    zh: "Chinese (简体中文)",
    "zh-CN": "Simplified Chinese (简体中文)",
    "zh-Hans": "Simplified Chinese (简体中文)",
    "zh-TW": "Traditional Chinese (繁體中文)",
    "zh-Hant": "Traditional Chinese (繁體中文)",
    en: "English",
    ja: "Japanese",
    ko: "Korean",
    de: "German",
    fr: "French",
    es: "Spanish",
    ru: "Russian",
  }

  /** A human name for a tag, for the prompt ("zh-CN" → "Simplified Chinese (简体中文)"). */
  export function name(tag: string): string {
    return NAMES[tag] ?? NAMES[tag.split("-")[0]!] ?? tag
  }

  /** The language rule paragraph for a prompt. */
  export function rule(setting: Setting = "auto"): string {
    const keep =
      "Keep code, identifiers, file paths, commands, tool names and tool arguments in their original form, and write files (code, comments, plans, commit messages) in the project's own language and conventions."
    if (setting === "auto")
      return `Language setting: auto. Speak to the user in the language the user writes in (for example, answer in Chinese when the user writes Chinese, in English when they write English). Text that only the Scheduler or other agents read (tool arguments, reports) may stay in English. ${keep}`
    return `Language setting: ${setting}. Speak to the user in ${name(setting)} (${setting}), whatever language they write in. ${keep}`
  }

  /** Detects Chinese text (Han characters), for "auto" when code must pick a catalog. */
  export function detect(text: string): Catalog {
    return detectLang(text)
  }

  /**
   * The catalog for texts from code: a locked Chinese tag → zh-CN, any other tag → English; "auto"
   * follows the user's language when known (a tag, or a sample of their text), else English.
   */
  export function catalogOf(setting: Setting = "auto", user?: { tag?: string; text?: string }): Catalog {
    return langOf(setting, user)
  }

  export type Key = WordKey
  export const keys: readonly Key[] = KEYS

  /** A text from the catalogue with `{param}`s filled; a language given as a setting is mapped first. */
  export function t(lang: Catalog | Setting, key: Key, params: Params = {}): string {
    return word(catalogOf(lang), key, params)
  }

  /** A text whose key is made at run time (`guard.instead.<role>`), or `fallback` when the catalogue has none. */
  export function tOr(lang: Catalog | Setting, key: string, fallback: string, params: Params = {}): string {
    return wordOr(catalogOf(lang), key, fallback, params)
  }
}
