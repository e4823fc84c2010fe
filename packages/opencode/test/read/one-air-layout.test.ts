import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, test } from "vitest"

/**
 * One module names the layout of `.air/` (issue 42 item 3): src/scheduler/core/air-paths.ts. A second spelling
 * of `.air/local`, `.air/shared`, `".air"` (a `join(root, ".air", …)`), a glob of `.air/` or a pattern of it
 * in a regular expression is a path that would not move with the layout. Only the code counts: every string,
 * template and regular expression literal and JSX text of src/, read by TypeScript's parser; comments, like
 * the READMEs, may keep the names as prose.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const THE_ONE = "scheduler/core/air-paths.ts"

/**
 * The folder named in a literal's text: `.air` not followed by a letter, digit, `_` or `-` (so `.air-build` and
 * `/tmp/.air-capture` are other names), once a regex's escapes are undone (`\.air\/local`).
 */
const NAMES_AIR = new RegExp(`\\.${"air"}(?![\\w-])`)
/** The folder's name, from pieces: this file's own literals never spell it (a test below scans this file too). */
const AIR = "." + "air"

const LITERALS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
  ts.SyntaxKind.JsxText,
])

/** The literals of `text` (a file called `name`) that spell a path under `.air/`, as `<name>:<line>: <literal>`. */
function airLiterals(name: string, text: string): string[] {
  // Only a file whose text names the folder can have such a literal: the parser reads those alone.
  if (!NAMES_AIR.test(text.replace(/\\/g, ""))) return []
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, name.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (LITERALS.has(node.kind)) {
      const raw = node.getText(file)
      if (NAMES_AIR.test(raw.replace(/\\/g, ""))) found.push(`${name}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}: ${raw.split("\n")[0]!.trim()}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sourceFiles(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : []))
}

describe(`one module names the paths under ${AIR}/: scheduler/core/air-paths.ts`, () => {
  test("finds a second spelling in code, and lets comments and other names through (planted examples)", () => {
    // Built from pieces (AIR), so this file's own literals spell none of them.
    const air = AIR
    const planted = [
      `const dir = join(root, "${air}", "local", "evidence")`,
      `const file = "${air}/shared/rules/house.json"`,
      `const line = \`logs in ${air}/local/evidence/\${taskId}/\``,
      `const LOCAL = /(^|\\/)\\${air}\\/local(\\/|$)/`,
      `const ignored = ["${air}/**"]`,
      `// where the run keeps its state: ${air}/local/state`,
      `/** the rules, ${air}/shared/rules */`,
      `const build = "${air}-build"`,
      `const probe = "/tmp/${air}-probe"`,
      `const p = AirPaths.evidence(root, taskId)`,
    ].join("\n")
    expect(airLiterals("planted.ts", planted).map((hit) => hit.split(": ")[0])).toEqual(["planted.ts:1", "planted.ts:2", "planted.ts:3", "planted.ts:4", "planted.ts:5"])
    expect(airLiterals("planted.tsx", `const v = <text>see ${air}/local/state</text>`)).toHaveLength(1)
  })

  test(`no file of src/ but air-paths.ts spells a path under ${AIR}/`, () => {
    const found = sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((name) => name !== THE_ONE)
      .flatMap((name) => airLiterals(`src/${name}`, readFileSync(join(SRC, name), "utf8")))
    // Take the name from AirPaths: AirPaths.evidence(root, taskId) for a path, AirPaths.EVIDENCE for words or a glob.
    expect(found).toEqual([])
  })

  test("the module itself is found by the scanner (else the check above would pass on a blind scanner), and this file is not", () => {
    expect(airLiterals(THE_ONE, readFileSync(join(SRC, THE_ONE), "utf8"))).not.toEqual([])
    expect(airLiterals("one-air-layout.test.ts", readFileSync(fileURLToPath(import.meta.url), "utf8"))).toEqual([])
  })
})
