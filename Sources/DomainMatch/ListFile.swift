/// One entry of a list file, handed to a sink while the file is read.
public enum ListItem {
    /// A valid, lowercase, dotted name of at least two labels. The bytes are only valid
    /// during the sink call (they point into the scanner's scratch or the input).
    case name(UnsafeRawBufferPointer)
    case ip(IPAddress)
}

/// The list-file format (docs/blocklists.md#list-files): one entry a line, as plain names, hosts lines
/// (`0.0.0.0 a.com b.com`) or adblock `||name^`, with `#` and `!` comments, also after
/// an entry. Category lists are block lists, so entries follow `ListKind.block`.
///
/// Reads bytes, not `String`s: a plain name line is checked and handed on in place,
/// without allocating; anything unusual (a URL, IDN, an address) takes the general path
/// of `ListEntry.parse`, so both paths give the same answer.
public struct ListFileScanner {
    public private(set) var stats = ListStats()
    /// A line cut by the end of a chunk, completed by the next one.
    private var carry: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 256)
    /// Whether the first line is still to come (a UTF-8 byte-order mark is dropped there).
    private var atStart = true

    public init() {}

    /// Feeds the next chunk of the file; complete lines go to `sink` at once.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, sink: (ListItem) -> Void) {
        var start = 0
        while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if carry.isEmpty {
                line(UnsafeRawBufferPointer(rebasing: chunk[start..<newline]), sink: sink)
            } else {
                carry.append(contentsOf: chunk[start..<newline])
                let whole = carry
                whole.withUnsafeBytes { line($0, sink: sink) }
                carry.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        carry.append(contentsOf: chunk[start...])
    }

    /// Ends the file: a last line without a newline is read too.
    public mutating func finish(sink: (ListItem) -> Void) -> ListStats {
        if !carry.isEmpty {
            let whole = carry
            whole.withUnsafeBytes { line($0, sink: sink) }
            carry.removeAll()
        }
        return stats
    }

    private mutating func line(_ whole: UnsafeRawBufferPointer, sink: (ListItem) -> Void) {
        stats.lines += 1
        var raw = whole
        if atStart {
            atStart = false
            if raw.starts(with: [0xEF, 0xBB, 0xBF]) { raw = UnsafeRawBufferPointer(rebasing: raw[3...]) }
        }
        var end = raw.count
        if let comment = raw.firstIndex(where: { $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "!") }) { end = comment }
        let content = UnsafeRawBufferPointer(rebasing: raw[0..<end])
        var tokens = Tokens(content)
        guard let first = tokens.next() else {
            stats.comments += 1
            return
        }
        let lead = content[first.lowerBound]
        if lead == UInt8(ascii: "|") || lead == UInt8(ascii: "@") || lead == UInt8(ascii: "[") {
            adblock(content, first, more: tokens.next() != nil, raw: raw, sink: sink)
            return
        }
        guard let second = tokens.next() else {
            take(UnsafeRawBufferPointer(rebasing: content[first]), raw: raw, sink: sink)
            return
        }
        // Hosts format: every name after the address.
        guard let address = IPAddress(String(decoding: content[first], as: UTF8.self)) else {
            stats.skippedInvalid += 1
            stats.note(raw, "more than one entry on a line that does not start with an address")
            return
        }
        var next: Range<Int>? = second
        while let token = next {
            let bytes = UnsafeRawBufferPointer(rebasing: content[token])
            if ListFileScanner.isReservedHostsName(bytes)
                || IPAddress(String(decoding: bytes, as: UTF8.self)) == address
            {
                stats.skippedReserved += 1
            } else {
                take(bytes, raw: raw, sink: sink)
            }
            next = tokens.next()
        }
    }

    /// `||name^` only; `@@` exceptions, `$` options and paths are skipped.
    private mutating func adblock(
        _ content: UnsafeRawBufferPointer, _ token: Range<Int>, more: Bool,
        raw: UnsafeRawBufferPointer, sink: (ListItem) -> Void
    ) {
        var body = token
        guard !more, content[body].starts(with: [UInt8(ascii: "|"), UInt8(ascii: "|")]) else {
            stats.skippedAdblock += 1
            stats.note(raw, "adblock rule other than ||name^")
            return
        }
        body = body.lowerBound + 2..<body.upperBound
        if content[body].last == UInt8(ascii: "^") { body = body.lowerBound..<body.upperBound - 1 }
        guard !content[body].contains(where: { "$/^*|".utf8.contains($0) }) else {
            stats.skippedAdblock += 1
            stats.note(raw, "adblock rule with options or a path")
            return
        }
        take(UnsafeRawBufferPointer(rebasing: content[body]), raw: raw, sink: sink)
    }

    private mutating func take(_ token: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer, sink: (ListItem) -> Void) {
        if let fast = FastName.check(token, into: &scratch) {
            switch fast {
            case .success(let count):
                scratch.withUnsafeBytes { sink(.name(UnsafeRawBufferPointer(rebasing: $0[0..<count]))) }
                stats.names += 1
            case .failure(let reason):
                skip(reason, raw)
            }
            return
        }
        switch ListEntry.parse(String(decoding: token, as: UTF8.self), kind: .block) {
        case .success(.name(let name)):
            name.bytes.withUnsafeBytes { sink(.name($0)) }
            stats.names += 1
        case .success(.ip(let address)):
            sink(.ip(address))
            stats.ipEntries += 1
        case .failure(let reason):
            skip(reason, raw)
        }
    }

    private mutating func skip(_ reason: SkipReason, _ raw: UnsafeRawBufferPointer) {
        if reason == .singleLabel {
            stats.skippedSingleLabel += 1
        } else {
            stats.skippedInvalid += 1
        }
        stats.note(raw, reason.description)
    }

    static func isReservedHostsName(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let lowered = bytes.map { $0.asciiLowercased }
        for reserved in ["localhost", "localhost.localdomain", "broadcasthost", "local"]
        where lowered.elementsEqual(reserved.utf8) { return true }
        return lowered.starts(with: "ip6-".utf8)
    }
}

/// Blank-separated tokens of a line, as index ranges.
struct Tokens: IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func next() -> Range<Int>? {
        while index < bytes.count, Tokens.isBlank(bytes[index]) { index += 1 }
        guard index < bytes.count else { return nil }
        let start = index
        while index < bytes.count, !Tokens.isBlank(bytes[index]) { index += 1 }
        return start..<index
    }

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == 0x0B
            || byte == 0x0C
    }
}

public enum ListFile {
    /// Parses a whole file held in memory and hands every entry to `sink`, in file order.
    public static func parse(_ bytes: some Collection<UInt8>, sink: (ListEntry) -> Void) -> ListStats {
        var scanner = ListFileScanner()
        return withoutActuallyEscaping(sink) { sink in
            let handle: (ListItem) -> Void = { item in
                switch item {
                case .name(let name): sink(.name(DomainName(validatedBytes: Array(name))))
                case .ip(let address): sink(.ip(address))
                }
            }
            Array(bytes).withUnsafeBytes { scanner.feed($0, sink: handle) }
            return scanner.finish(sink: handle)
        }
    }
}
