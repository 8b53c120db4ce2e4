import DomainMatch

/// The file through which `firewall watch` (root, the firewall's unit) hands the refused
/// egress attempts to the daemon, which must not hold CAP_NET_ADMIN to read the table
/// itself (docs/network.md#egress). One read of both sets, written whole and replaced
/// atomically each time:
///
///     phosra-gate egress-attempts 2
///     read 1765046400
///     198.51.100.10 udp 5353 57
///     2001:db8:1::10 tcp 8443 12
///
/// The first line names the format and its version. `read` is the wall-clock second the
/// sets were read (Unix time). In version 2 the third line may be `table absent`: the
/// firewall's table was not there to read, which the daemon reports as trouble (the
/// version 1 a watch of the previous release writes, during an upgrade, never says so).
/// Each further line is one element: the device's address,
/// `tcp` or `udp`, the port, and the seconds after `read` until the element leaves the
/// set (`expires` in nft's words, 0 to the set's timeout). Fields are separated by one
/// space; every line ends in a newline.
public struct EgressAttemptsFile: Sendable, Equatable {
    public static let header = "phosra-gate egress-attempts 2"
    /// The previous release's header, read as well so an upgrade's moment loses nothing.
    static let headerVersion1 = "phosra-gate egress-attempts 1"
    static let tableAbsentLine = "table absent"
    /// Two full sets of the longest lines fit with room to spare; anything larger was not
    /// written by `firewall watch`.
    public static let sizeLimit = 4 << 20

    /// Unix seconds of the read.
    public var read: Int64
    /// `expires` counts from `read`.
    public var attempts: [EgressAttempt]
    /// The table was missing at the read (so `attempts` is empty).
    public var tableAbsent: Bool

    /// `expires` is held to the set's timeout, the range the parser accepts.
    public init(read: Int64, attempts: [EgressAttempt], tableAbsent: Bool = false) {
        self.read = read
        self.tableAbsent = tableAbsent
        self.attempts = attempts.map { attempt in
            var held = attempt
            held.expires = min(max(attempt.expires, 0), Ruleset.refusedTimeoutSeconds)
            return held
        }
    }

    /// Why a file is not one `firewall watch` writes; each names the 1-based line.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case header(found: String)
        case readLine(line: Int, found: String)
        case fields(line: Int, count: Int)
        case address(line: Int, found: String)
        case transport(line: Int, found: String)
        case port(line: Int, found: String)
        case expires(line: Int, found: String)
        case unterminated

        public var description: String {
            switch self {
            case .header(let found): "line 1: \"\(found)\" is not \"\(EgressAttemptsFile.header)\""
            case .readLine(let line, let found): "line \(line): \"\(found)\" is not read SECONDS"
            case .fields(let line, let count):
                "line \(line): \(count) fields, not ADDRESS PROTOCOL PORT EXPIRES"
            case .address(let line, let found): "line \(line): \"\(found)\" is not an IP address"
            case .transport(let line, let found): "line \(line): \"\(found)\" is not tcp or udp"
            case .port(let line, let found): "line \(line): \"\(found)\" is not a port (1-65535)"
            case .expires(let line, let found):
                "line \(line): \"\(found)\" is not seconds until expiry (0-\(Ruleset.refusedTimeoutSeconds))"
            case .unterminated: "the last line has no newline: the file is cut short"
            }
        }
    }

    /// The file's text.
    public var text: String {
        var text = Self.header + "\nread \(read)\n"
        if tableAbsent { text += Self.tableAbsentLine + "\n" }
        for attempt in attempts {
            text += "\(attempt.client) \(attempt.transport.rawValue) \(attempt.port) \(attempt.expires)\n"
        }
        return text
    }

    /// Parses the whole file or nothing: the writer replaces it atomically, so a bad line
    /// means something other than `firewall watch` wrote it, and no part of it is trusted.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> EgressAttemptsFile {
        guard bytes.last == UInt8(ascii: "\n") else {
            throw bytes.isEmpty ? .header(found: "") : .unterminated
        }
        let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard lines[0] == header || lines[0] == headerVersion1 else {
            throw .header(found: String(lines[0].prefix(80)))
        }
        guard lines.count > 1, lines[1].hasPrefix("read "), let read = number(lines[1].dropFirst(5), as: Int64.self)
        else {
            throw .readLine(line: 2, found: lines.count > 1 ? String(lines[1].prefix(80)) : "")
        }
        let tableAbsent = lines[0] == header && lines.count > 2 && lines[2] == tableAbsentLine
        var attempts: [EgressAttempt] = []
        attempts.reserveCapacity(lines.count - 2)
        for (index, line) in lines.enumerated().dropFirst(tableAbsent ? 3 : 2) {
            attempts.append(try attempt(line, number: index + 1))
        }
        return EgressAttemptsFile(read: read, attempts: attempts, tableAbsent: tableAbsent)
    }

    private static func attempt(_ line: String, number: Int) throws(ParseError) -> EgressAttempt {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 4 else { throw .fields(line: number, count: fields.count) }
        guard let client = IPAddress(fields[0]) else {
            throw .address(line: number, found: String(fields[0].prefix(80)))
        }
        guard let transport = EgressRule.Transport(rawValue: String(fields[1])) else {
            throw .transport(line: number, found: String(fields[1].prefix(80)))
        }
        guard let port = Self.number(fields[2], as: UInt16.self), port > 0 else {
            throw .port(line: number, found: String(fields[2].prefix(80)))
        }
        guard let expires = Self.number(fields[3], as: Int.self), expires <= Ruleset.refusedTimeoutSeconds else {
            throw .expires(line: number, found: String(fields[3].prefix(80)))
        }
        return EgressAttempt(client: client, transport: transport, port: port, expires: expires)
    }

    /// Plain decimal digits only: no sign, no space, no empty field.
    private static func number<Number: FixedWidthInteger>(_ text: Substring, as: Number.Type) -> Number? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Number(text)
    }

    /// The attempts still in the set at wall-clock second `now`, their `expires` counted
    /// from `now`: the daemon reads the file up to an interval after it was written, and
    /// an element's end must come out the same whenever it is read.
    public func current(at now: Int64) -> [EgressAttempt] {
        let age = max(0, now - read)
        return attempts.compactMap { attempt in
            let left = Int64(attempt.expires) - age
            guard left >= 0 else { return nil }
            var shifted = attempt
            shifted.expires = Int(left)
            return shifted
        }
    }
}
