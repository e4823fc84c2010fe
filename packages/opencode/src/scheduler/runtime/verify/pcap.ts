/**
 * A reader of the classic pcap file format (what `tcpdump -w` writes) down to TCP segments, with no
 * dependency: the format is a fixed binary layout, and reading it here keeps the byte counts exact without
 * parsing `tcpdump -r`'s text, whose wording changes between versions.
 *
 * Exact counts come from the IP and TCP headers' length fields, never from the captured bytes: a snaplen
 * cuts a packet's payload in the file, not its length on the wire.
 */
export namespace Pcap {
  export interface Packet {
    /** Seconds since the epoch (fractional). */
    time: number
    /** Bytes of the packet present in the file. */
    captured: Buffer
    /** The packet's length on the wire. */
    length: number
  }

  export interface File {
    linkType: number
    snaplen: number
    packets: Packet[]
    /** The file ends inside a record (a capture killed mid-write): the partial record is left out. */
    truncatedTail: boolean
  }

  export const LINK = { NULL: 0, EN10MB: 1, RAW: 101, LINUX_SLL: 113, IPV4: 228, IPV6: 229, LINUX_SLL2: 276 } as const

  const MAGIC_US = 0xa1b2c3d4
  const MAGIC_NS = 0xa1b23c4d

  /** The file's records; a wrong magic number (pcapng, not a capture at all) is an error naming what it found. */
  export function read(data: Buffer): File {
    if (data.length < 24) throw new Error(`not a pcap file: ${data.length} bytes, shorter than the 24-byte header`)
    let little: boolean
    let nanos: boolean
    const le = data.readUInt32LE(0)
    const be = data.readUInt32BE(0)
    if (le === MAGIC_US || le === MAGIC_NS) [little, nanos] = [true, le === MAGIC_NS]
    else if (be === MAGIC_US || be === MAGIC_NS) [little, nanos] = [false, be === MAGIC_NS]
    else throw new Error(`not a classic pcap file (magic 0x${be.toString(16).padStart(8, "0")}; pcapng is not read here: write with tcpdump -w)`)
    const u32 = (at: number) => (little ? data.readUInt32LE(at) : data.readUInt32BE(at))
    const snaplen = u32(16)
    const linkType = u32(20) & 0x0fffffff
    const packets: Packet[] = []
    let at = 24
    let truncatedTail = false
    while (at < data.length) {
      if (at + 16 > data.length) {
        truncatedTail = true
        break
      }
      const seconds = u32(at)
      const fraction = u32(at + 4)
      const capturedLength = u32(at + 8)
      const length = u32(at + 12)
      if (at + 16 + capturedLength > data.length) {
        truncatedTail = true
        break
      }
      packets.push({ time: seconds + fraction / (nanos ? 1e9 : 1e6), captured: data.subarray(at + 16, at + 16 + capturedLength), length })
      at += 16 + capturedLength
    }
    return { linkType, snaplen, packets, truncatedTail }
  }

  export interface Segment {
    time: number
    source: string
    sourcePort: number
    destination: string
    destinationPort: number
    seq: number
    ack: number
    flags: { syn: boolean; ack: boolean; fin: boolean; rst: boolean; psh: boolean }
    /** TCP payload bytes on the wire (from the headers). */
    payloadLength: number
    /** The payload bytes present in the file (fewer when the snaplen cut the packet). */
    payload: Buffer
  }

  export type Decoded = { kind: "tcp"; segment: Segment } | { kind: "other"; time: number; what: string; source?: string; destination?: string }

  /** One packet as a TCP segment, or what else it is ("UDP", "ICMP", "ARP", "IPv6 extension headers"…). */
  export function decode(packet: Packet, linkType: number): Decoded {
    const ip = network(packet.captured, linkType)
    if (!ip) return { kind: "other", time: packet.time, what: `link type ${linkType} frame` }
    if (ip.kind === "not-ip") return { kind: "other", time: packet.time, what: ip.what }
    const b = ip.bytes
    const version = b.length > 0 ? b[0]! >> 4 : 0
    let source: string
    let destination: string
    let protocol: number
    let tcpAt: number
    let ipPayloadLength: number
    if (version === 4 && b.length >= 20) {
      const headerLength = (b[0]! & 0x0f) * 4
      ipPayloadLength = b.readUInt16BE(2) - headerLength
      protocol = b[9]!
      source = ipv4(b, 12)
      destination = ipv4(b, 16)
      tcpAt = headerLength
    } else if (version === 6 && b.length >= 40) {
      ipPayloadLength = b.readUInt16BE(4)
      protocol = b[6]!
      source = ipv6(b, 8)
      destination = ipv6(b, 24)
      tcpAt = 40
    } else return { kind: "other", time: packet.time, what: `a truncated or unknown IP packet (version ${version})` }
    if (protocol !== 6) return { kind: "other", time: packet.time, what: PROTOCOLS[protocol] ?? `IP protocol ${protocol}`, source, destination }
    if (b.length < tcpAt + 20) return { kind: "other", time: packet.time, what: "a TCP segment cut before its header ended (snaplen too small)", source, destination }
    const dataOffset = (b[tcpAt + 12]! >> 4) * 4
    const flagBits = b[tcpAt + 13]!
    const payloadLength = Math.max(0, ipPayloadLength - dataOffset)
    const payloadAt = tcpAt + dataOffset
    return {
      kind: "tcp",
      segment: {
        time: packet.time,
        source,
        sourcePort: b.readUInt16BE(tcpAt),
        destination,
        destinationPort: b.readUInt16BE(tcpAt + 2),
        seq: b.readUInt32BE(tcpAt + 4),
        ack: b.readUInt32BE(tcpAt + 8),
        flags: { fin: !!(flagBits & 0x01), syn: !!(flagBits & 0x02), rst: !!(flagBits & 0x04), psh: !!(flagBits & 0x08), ack: !!(flagBits & 0x10) },
        payloadLength,
        payload: b.subarray(Math.min(payloadAt, b.length), Math.min(payloadAt + payloadLength, b.length)),
      },
    }
  }

  const PROTOCOLS: Record<number, string> = { 1: "ICMP", 17: "UDP", 58: "ICMPv6", 2: "IGMP" }

  /** The IP packet inside a link-layer frame. */
  function network(frame: Buffer, linkType: number): { kind: "ip"; bytes: Buffer } | { kind: "not-ip"; what: string } | undefined {
    const byType = (type: number, at: number) => (type === 0x0800 || type === 0x86dd ? { kind: "ip" as const, bytes: frame.subarray(at) } : { kind: "not-ip" as const, what: type === 0x0806 ? "ARP" : `ethertype 0x${type.toString(16)}` })
    switch (linkType) {
      case LINK.EN10MB:
        return frame.length >= 14 ? byType(frame.readUInt16BE(12), 14) : undefined
      case LINK.LINUX_SLL:
        return frame.length >= 16 ? byType(frame.readUInt16BE(14), 16) : undefined
      case LINK.LINUX_SLL2:
        return frame.length >= 20 ? byType(frame.readUInt16BE(0), 20) : undefined
      case LINK.NULL:
        return frame.length >= 4 ? { kind: "ip", bytes: frame.subarray(4) } : undefined
      case LINK.RAW:
      case LINK.IPV4:
      case LINK.IPV6:
        return { kind: "ip", bytes: frame }
      default:
        return undefined
    }
  }

  function ipv4(b: Buffer, at: number): string {
    return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`
  }

  /** The compressed text form (RFC 5952): the longest run of zero groups becomes `::`. */
  function ipv6(b: Buffer, at: number): string {
    const groups = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(at + i * 2))
    let bestStart = -1
    let bestLength = 0
    for (let i = 0; i < 8; ) {
      if (groups[i] !== 0) {
        i++
        continue
      }
      let j = i
      while (j < 8 && groups[j] === 0) j++
      if (j - i > bestLength && j - i > 1) [bestStart, bestLength] = [i, j - i]
      i = j
    }
    const hex = groups.map((g) => g.toString(16))
    if (bestStart < 0) return hex.join(":")
    return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`
  }
}
