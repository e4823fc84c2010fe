import { readFileSync, writeFileSync } from "node:fs"
import { PNG } from "pngjs"

/**
 * Pictures as the visual checks read them: RGBA pixels in rows, read from and written to PNG with pngjs (a
 * pure-JS codec: no native build, nothing to install on the machine beyond the npm package).
 */
export namespace Png {
  export type Rgb = readonly [number, number, number]

  export interface Image {
    width: number
    height: number
    /** RGBA, 4 bytes a pixel, row after row. */
    data: Buffer
  }

  export interface Rect {
    x: number
    y: number
    width: number
    height: number
  }

  export function encode(image: Image): Buffer {
    const png = new PNG({ width: image.width, height: image.height })
    image.data.copy(png.data)
    // Screens are mostly flat colour: one fixed row filter (Sub) and the fastest deflate pack 800x600 into ~6 kB in
    // ~40 ms; pngjs's default (every filter tried on every row, level 9) took ~125 ms for half the size.
    return PNG.sync.write(png, { deflateLevel: 1, filterType: 1 })
  }

  export function decode(bytes: Buffer): Image {
    const png = PNG.sync.read(bytes)
    return { width: png.width, height: png.height, data: png.data }
  }

  export function read(path: string): Image {
    return decode(readFileSync(path))
  }

  export function write(path: string, image: Image): void {
    writeFileSync(path, encode(image))
  }

  /** The part of `image` inside `rect`, clipped to the image (a window partly off the screen). */
  export function crop(image: Image, rect: Rect): Image {
    const x0 = Math.max(0, rect.x)
    const y0 = Math.max(0, rect.y)
    const x1 = Math.min(image.width, rect.x + rect.width)
    const y1 = Math.min(image.height, rect.y + rect.height)
    const width = Math.max(0, x1 - x0)
    const height = Math.max(0, y1 - y0)
    const data = Buffer.alloc(width * height * 4)
    for (let y = 0; y < height; y++) {
      const from = ((y0 + y) * image.width + x0) * 4
      image.data.copy(data, y * width * 4, from, from + width * 4)
    }
    return { width, height, data }
  }

  /** The colour at (x, y), or undefined outside the picture. */
  export function pixel(image: Image, x: number, y: number): Rgb | undefined {
    if (!Number.isInteger(x) || !Number.isInteger(y) || x < 0 || y < 0 || x >= image.width || y >= image.height) return undefined
    const i = (y * image.width + x) * 4
    return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!]
  }

  /** The most common colour and the share of the pixels it covers (1 for a picture of one colour). */
  export function dominant(image: Image): { rgb: Rgb; share: number } {
    const total = image.width * image.height
    if (total === 0) return { rgb: [0, 0, 0], share: 1 }
    const counts = new Map<number, number>()
    let best = 0
    let bestCount = 0
    for (let i = 0; i < image.data.length; i += 4) {
      const key = (image.data[i]! << 16) | (image.data[i + 1]! << 8) | image.data[i + 2]!
      const n = (counts.get(key) ?? 0) + 1
      counts.set(key, n)
      if (n > bestCount) {
        bestCount = n
        best = key
      }
    }
    return { rgb: [(best >> 16) & 255, (best >> 8) & 255, best & 255], share: bestCount / total }
  }

  export function hex(rgb: Rgb): string {
    return "#" + rgb.map((c) => c.toString(16).padStart(2, "0")).join("")
  }

  /** "#ff8000" or "ff8000" → [255, 128, 0]; undefined when it is not six hex digits. */
  export function parseHex(text: string): Rgb | undefined {
    const m = /^#?([0-9a-f]{6})$/i.exec(text.trim())
    if (!m) return undefined
    const n = parseInt(m[1]!, 16)
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255]
  }
}
