/// The list-file format (SPEC §1.5): one entry a line, as plain names, hosts lines
/// (`0.0.0.0 a.com b.com`) or adblock `||name^`, with `#` and `!` comments, also after
/// an entry. Category lists are block lists, so entries follow `ListKind.block`.
public enum ListFile {
    /// Parses `bytes` and hands every entry to `sink`, in file order. Never fails.
    public static func parse(_ bytes: some Collection<UInt8>, sink: (ListEntry) -> Void) -> ListStats {
        var stats = ListStats()
        var line: [UInt8] = []
        line.reserveCapacity(256)
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                parseLine(line, into: &stats, sink: sink)
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        if !line.isEmpty { parseLine(line, into: &stats, sink: sink) }
        return stats
    }

    static func parseLine(_ raw: [UInt8], into stats: inout ListStats, sink: (ListEntry) -> Void) {
        stats.lines += 1
        var content = raw[...]
        if let comment = content.firstIndex(where: { $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "!") }) {
            content = content[..<comment]
        }
        let tokens = content.split(whereSeparator: isBlank)
        guard let first = tokens.first else {
            stats.comments += 1
            return
        }
        let text = String(decoding: raw, as: UTF8.self)
        if first.first == UInt8(ascii: "|") || first.first == UInt8(ascii: "@") || first.first == UInt8(ascii: "[") {
            parseAdblock(first, tokens: tokens.count, text: text, into: &stats, sink: sink)
            return
        }
        if tokens.count > 1 {
            // Hosts format: every name after the address.
            guard let address = IPAddress(String(decoding: first, as: UTF8.self)) else {
                stats.skippedInvalid += 1
                stats.note(text, "more than one entry on a line that does not start with an address")
                return
            }
            for token in tokens.dropFirst() {
                let name = String(decoding: token, as: UTF8.self)
                if isReservedHostsName(name.lowercased()) || IPAddress(name) == address {
                    stats.skippedReserved += 1
                    continue
                }
                take(token, text: text, into: &stats, sink: sink)
            }
            return
        }
        take(first, text: text, into: &stats, sink: sink)
    }

    /// `||name^` only; `@@` exceptions, `$` options and paths are skipped.
    private static func parseAdblock(_ token: ArraySlice<UInt8>, tokens: Int, text: String,
                                     into stats: inout ListStats, sink: (ListEntry) -> Void) {
        var body = token
        guard tokens == 1, body.starts(with: [UInt8(ascii: "|"), UInt8(ascii: "|")]) else {
            stats.skippedAdblock += 1
            stats.note(text, "adblock rule other than ||name^")
            return
        }
        body = body.dropFirst(2)
        if body.last == UInt8(ascii: "^") { body = body.dropLast() }
        guard !body.contains(where: { "$/^*|".utf8.contains($0) }) else {
            stats.skippedAdblock += 1
            stats.note(text, "adblock rule with options or a path")
            return
        }
        take(body, text: text, into: &stats, sink: sink)
    }

    private static func take(_ token: ArraySlice<UInt8>, text: String, into stats: inout ListStats,
                             sink: (ListEntry) -> Void) {
        switch ListEntry.parse(String(decoding: token, as: UTF8.self), kind: .block) {
        case .success(let entry):
            if case .ip = entry { stats.ipEntries += 1 } else { stats.names += 1 }
            sink(entry)
        case .failure(.singleLabel):
            stats.skippedSingleLabel += 1
            stats.note(text, SkipReason.singleLabel.description)
        case .failure(let reason):
            stats.skippedInvalid += 1
            stats.note(text, reason.description)
        }
    }

    static func isReservedHostsName(_ name: String) -> Bool {
        switch name {
        case "localhost", "localhost.localdomain", "broadcasthost", "local": return true
        default: return name.hasPrefix("ip6-")
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
            || byte == 0x0B || byte == 0x0C
    }
}
