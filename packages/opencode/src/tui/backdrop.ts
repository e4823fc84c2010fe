import type { CliRenderer, OptimizedBuffer, Renderable, RGBA } from "@opentui/core"

/**
 * Wide characters behind the engine's dialogs. Every dialog of the pinned engine dims the screen with a
 * full-screen box filled in a translucent colour; its renderer keeps the glyph under a translucent fill
 * only when it is one cell wide (opentui's `blendCells`), so Chinese text behind any dialog — the chat, our
 * sidebar — turned to blanks while it was open (upstream: anomalyco/opentui#837, anomalyco/opencode#7650).
 *
 * Here, before each frame is drawn, such a backdrop stops painting: its fill goes transparent and, at its
 * turn in the frame, the colours already drawn beneath it move toward the fill's colour by its alpha through
 * a colour matrix — the blend the fill made, with every glyph kept. A translucent box that does not cover
 * the screen is filled as before (a colour matrix takes the whole buffer).
 */
export namespace Backdrop {
  type Colour = { r: number; g: number; b: number; a: number }
  type Box = Renderable & { backgroundColor: RGBA | string }

  /** Row-major over (r, g, b, a): each channel moves toward `c` by `c.a`, as blending the fill did. */
  export function dimMatrix(c: Colour): Float32Array {
    const keep = 1 - c.a
    // prettier-ignore
    return new Float32Array([
      keep, 0, 0, c.r * c.a,
      0, keep, 0, c.g * c.a,
      0, 0, keep, c.b * c.a,
      0, 0, 0, 1,
    ])
  }

  /** A box whose fill is translucent: neither absent (alpha 0) nor opaque. */
  export function translucentFill(node: unknown): RGBA | undefined {
    const colour = (node as { backgroundColor?: unknown }).backgroundColor
    if (typeof colour !== "object" || colour === null || !("a" in colour)) return undefined
    const a = (colour as RGBA).a
    return a > 0 && a < 1 ? (colour as RGBA) : undefined
  }

  /** opentui's TargetChannel.Both: the matrix applies to the foreground and the background colours. */
  const BOTH_CHANNELS = 3

  /** The render hooks this module set: a box with a hook of the engine's own is left alone. */
  const ours = new WeakSet<object>()

  /** Takes over the fill of one translucent box (again after the engine set its colour anew). */
  function takeOver(box: Box, fill: RGBA): void {
    if (box.renderBefore && !ours.has(box.renderBefore)) return
    const c: Colour = { r: fill.r, g: fill.g, b: fill.b, a: fill.a }
    const matrix = dimMatrix(c)
    box.backgroundColor = "transparent"
    const hook = function (this: Renderable, buffer: OptimizedBuffer) {
      if (this.x <= 0 && this.y <= 0 && this.x + this.width >= buffer.width && this.y + this.height >= buffer.height) buffer.colorMatrixUniform(matrix, 1, BOTH_CHANNELS)
      else buffer.fillRect(this.x, this.y, this.width, this.height, fill)
    }
    ours.add(hook)
    box.renderBefore = hook
  }

  function visit(node: Renderable): void {
    // Only a box laid over others (the engine's dialogs are absolute): one in the flow hides nothing.
    const fill = (node as unknown as { _positionType?: string })._positionType === "absolute" ? translucentFill(node) : undefined
    if (fill) takeOver(node as Box, fill)
    for (const child of node.getChildren()) visit(child)
  }

  /** Watches every frame of the renderer; returns the function that stops it. */
  export function install(renderer: CliRenderer): () => void {
    const frame = async () => visit(renderer.root)
    renderer.setFrameCallback(frame)
    return () => renderer.removeFrameCallback(frame)
  }
}
