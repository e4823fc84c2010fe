import type { Png } from "./png"

/**
 * Reads the X Window Dump files `xwd` writes (x11-apps) into RGBA pixels. Only what an Xvfb screen gives is
 * accepted: a ZPixmap of a TrueColor/DirectColor visual at 24 or 32 bits a pixel; anything else is an error
 * naming the field, never a wrong picture.
 *
 * The header is 25 big-endian 32-bit words (xwd swaps it to network order whatever the machine), then the
 * window's name, the colormap entries (12 bytes each) and the pixels in the image's own byte order.
 */
export namespace Xwd {
  const HEADER_WORDS = 25
  const Z_PIXMAP = 2
  const TRUE_COLOR = 4
  const DIRECT_COLOR = 5
  const COLOR_ENTRY_BYTES = 12

  export interface Header {
    headerSize: number
    version: number
    format: number
    depth: number
    width: number
    height: number
    byteOrder: number
    bitsPerPixel: number
    bytesPerLine: number
    visualClass: number
    redMask: number
    greenMask: number
    blueMask: number
    colormapEntries: number
    colors: number
  }

  export function header(bytes: Buffer): Header {
    if (bytes.length < HEADER_WORDS * 4) throw new Error(`not an xwd file: ${bytes.length} bytes, shorter than its ${HEADER_WORDS * 4}-byte header`)
    const w = (i: number) => bytes.readUInt32BE(i * 4)
    return {
      headerSize: w(0),
      version: w(1),
      format: w(2),
      depth: w(3),
      width: w(4),
      height: w(5),
      byteOrder: w(7),
      bitsPerPixel: w(11),
      bytesPerLine: w(12),
      visualClass: w(13),
      redMask: w(14),
      greenMask: w(15),
      blueMask: w(16),
      colormapEntries: w(18),
      colors: w(19),
    }
  }

  export function decode(bytes: Buffer): Png.Image {
    const h = header(bytes)
    if (h.version !== 7) throw new Error(`xwd file version ${h.version}, expected 7`)
    if (h.format !== Z_PIXMAP) throw new Error(`xwd pixmap format ${h.format}, expected ZPixmap (2)`)
    if (h.visualClass !== TRUE_COLOR && h.visualClass !== DIRECT_COLOR) throw new Error(`xwd visual class ${h.visualClass}, expected TrueColor (4) or DirectColor (5)`)
    if (h.bitsPerPixel !== 32 && h.bitsPerPixel !== 24) throw new Error(`xwd at ${h.bitsPerPixel} bits a pixel, expected 24 or 32`)
    const start = h.headerSize + h.colors * COLOR_ENTRY_BYTES
    const need = start + h.bytesPerLine * h.height
    if (bytes.length < need) throw new Error(`xwd file cut short: ${bytes.length} bytes, ${need} needed for ${h.width}x${h.height}`)
    const bytesPerPixel = h.bitsPerPixel / 8
    const channel = (mask: number) => {
      const shift = mask === 0 ? 0 : Math.log2(mask & -mask)
      const bits = Math.round(Math.log2((mask >>> shift) + 1))
      return { mask, shift, max: (1 << bits) - 1 }
    }
    const r = channel(h.redMask)
    const g = channel(h.greenMask)
    const b = channel(h.blueMask)
    const scale = (value: number, c: { mask: number; shift: number; max: number }) => (c.max === 0 ? 0 : Math.round((((value & c.mask) >>> c.shift) * 255) / c.max))
    const msb = h.byteOrder === 1
    const data = Buffer.alloc(h.width * h.height * 4)
    if (h.bitsPerPixel === 32 && !msb && h.redMask === 0xff0000 && h.greenMask === 0xff00 && h.blueMask === 0xff) {
      // What Xvfb gives at depth 24 on a little-endian machine (BGRX in memory): copied without a per-pixel decode.
      for (let y = 0; y < h.height; y++) {
        let at = start + y * h.bytesPerLine
        let o = y * h.width * 4
        for (let x = 0; x < h.width; x++, at += 4, o += 4) {
          data[o] = bytes[at + 2]!
          data[o + 1] = bytes[at + 1]!
          data[o + 2] = bytes[at]!
          data[o + 3] = 255
        }
      }
      return { width: h.width, height: h.height, data }
    }
    for (let y = 0; y < h.height; y++) {
      let at = start + y * h.bytesPerLine
      for (let x = 0; x < h.width; x++, at += bytesPerPixel) {
        let value = 0
        for (let k = 0; k < bytesPerPixel; k++) value |= bytes[at + (msb ? k : bytesPerPixel - 1 - k)]! << (8 * (bytesPerPixel - 1 - k))
        value >>>= 0
        const o = (y * h.width + x) * 4
        data[o] = scale(value, r)
        data[o + 1] = scale(value, g)
        data[o + 2] = scale(value, b)
        data[o + 3] = 255
      }
    }
    return { width: h.width, height: h.height, data }
  }
}
