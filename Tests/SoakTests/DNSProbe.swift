import DNSWire
import TestSupport

/// Queries the soak sends and what their answers mean, judged by DNSWire's own parser.
enum DNSProbe {
    /// A recursive query for `name` with an OPT record (so a block carries its EDE).
    static func query(_ name: String, type: UInt16 = 1, id: UInt16) -> [UInt8] {
        var packet: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1]
        for label in name.split(separator: ".") { packet += [UInt8(label.utf8.count)] + Array(label.utf8) }
        packet += [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
        // OPT: root owner, type 41, payload 1232, no extended flags, no options.
        return packet + [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0]
    }

    /// What an answer says about the name.
    enum Outcome: Equatable, CustomStringConvertible {
        /// NXDOMAIN with EDE 15 (the default block mode), and its text.
        case blocked(String)
        /// NOERROR, with the IPv4 addresses of the answer section.
        case resolved([String])
        /// Anything else: another rcode, NXDOMAIN without EDE 15, or a reply that does not parse.
        case other(String)

        var description: String {
            switch self {
            case .blocked(let text): "blocked (\(text))"
            case .resolved(let addresses): "resolved \(addresses)"
            case .other(let text): text
            }
        }

        var isBlocked: Bool { if case .blocked = self { true } else { false } }
    }

    static func outcome(_ reply: [UInt8]) -> Outcome {
        let message: DNSMessage
        do { message = try DNSMessage.parse(reply) } catch { return .other("unparsable reply: \(error)") }
        let errors = (try? message.edns?.extendedErrors()) ?? []
        if message.rcode == .nxDomain, let block = errors.first(where: { $0.code == .blocked }) {
            return .blocked(block.text)
        }
        if message.rcode == .noError {
            return .resolved(message.answers.compactMap { $0.rdata.ipv4?.description })
        }
        return .other("rcode \(message.rcode), \(errors)")
    }

    /// The ID of a reply (0 when shorter than a header).
    static func id(_ reply: [UInt8]) -> UInt16 { reply.count >= 2 ? UInt16(reply[0]) << 8 | UInt16(reply[1]) : 0 }

    /// Hostile packets, none of them a valid query: the cheap layers (header, flags, opcode,
    /// question) each get their share. Never the soak's hit name, so no hit can come of them.
    static func malformed(using generator: inout SeededGenerator) -> [UInt8] {
        let id = UInt16.random(in: 1...UInt16.max, using: &generator)
        let valid = query("origin.test", id: id)
        switch Int.random(in: 0..<8, using: &generator) {
        case 0:
            return (0..<Int.random(in: 0...11, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
        case 1:
            return (0..<Int.random(in: 12...600, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
        case 2:  // a response, not a query
            var packet = valid
            packet[2] |= 0x80
            return packet
        case 3:  // two questions counted, one sent
            var packet = valid
            packet[5] = 2
            return packet
        case 4:  // cut inside the question
            return Array(valid.prefix(Int.random(in: 13..<(valid.count - 11), using: &generator)))
        case 5:  // a compression pointer that points at itself
            return Array(valid.prefix(12)) + [0xC0, 12, 0, 1, 0, 1]
        case 6:  // opcode UPDATE
            var packet = valid
            packet[2] = (packet[2] & 0x87) | (5 << 3)
            return packet
        default:  // a label longer than 63
            return Array(valid.prefix(12)) + [64] + Array(repeating: UInt8(ascii: "a"), count: 64) + [0, 0, 1, 0, 1]
        }
    }
}
