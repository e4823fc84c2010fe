/** The words of the views now live in the one catalogue, src/read/words.ts; this path re-exports it. */
export { catalog, LANGS, normaliseLang, resolveLang, t, type Key, type Lang } from "../read/words"
