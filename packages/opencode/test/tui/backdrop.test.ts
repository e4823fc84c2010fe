import { describe, expect, test } from "vitest"
import { Backdrop } from "../../src/tui/backdrop"

/** The colour matrix that stands in for the engine's translucent dialog backdrop (src/tui/backdrop.ts). */
function apply(m: Float32Array, [r, g, b, a]: number[]): number[] {
  const v = [r!, g!, b!, a!]
  return [0, 1, 2, 3].map((row) => v.reduce((sum, x, col) => sum + m[row * 4 + col]! * x, 0))
}

describe("the backdrop's dimming", () => {
  test("moves each colour toward the fill's by the fill's alpha, as the blend did, and keeps alpha", () => {
    const fill = { r: 0.1, g: 0.2, b: 0.3, a: 150 / 255 }
    const m = Backdrop.dimMatrix(fill)
    const under = [0.9, 0.5, 0.0, 1]
    const out = apply(m, under)
    const blend = (x: number, c: number) => x * (1 - fill.a) + c * fill.a
    expect(out.map((x) => Math.round(x * 1000) / 1000)).toEqual([blend(0.9, 0.1), blend(0.5, 0.2), blend(0, 0.3), 1].map((x) => Math.round(x * 1000) / 1000))
  })

  test("takes over only a translucent fill: none and an opaque one are left as they are", () => {
    expect(Backdrop.translucentFill({ backgroundColor: { r: 0, g: 0, b: 0, a: 0.59 } })).toBeDefined()
    expect(Backdrop.translucentFill({ backgroundColor: { r: 0, g: 0, b: 0, a: 1 } })).toBeUndefined()
    expect(Backdrop.translucentFill({ backgroundColor: { r: 0, g: 0, b: 0, a: 0 } })).toBeUndefined()
    expect(Backdrop.translucentFill({})).toBeUndefined()
  })
})
