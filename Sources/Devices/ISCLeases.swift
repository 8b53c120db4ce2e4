import DomainMatch
import Zoneinfo

/// ISC dhcpd's lease file (dhcpd.leases(5); Debian `/var/lib/dhcp/dhcpd.leases`):
///
///     lease 192.168.1.23 {
///       starts 3 2026/12/02 10:00:00;
///       ends 3 2026/12/02 22:00:00;
///       binding state active;
///       hardware ethernet aa:bb:cc:dd:ee:ff;
///       client-hostname "laptop";
///     }
///
/// dhcpd appends a lease's block each time it changes and rewrites the file now and then,
/// so the last block for an address wins. Only a lease in `binding state active` (or
/// with no binding state, as dhcpd 2 wrote) is held: `free`, `backup`, `expired`,
/// `released` and `abandoned` end the address's lease. `ends` is in UTC
/// (`weekday yyyy/mm/dd hh:mm:ss`), or `epoch N` under `db-time-format local`, or `never`.
/// DHCPv6 blocks (`ia-na`, `ia-ta`, `ia-pd`) carry no hardware address and, like every
/// other top-level statement and block, are passed over. A block the file ends inside
/// (a file cut short) is dropped.
enum ISCLeases {
    typealias Token = ISCLeaseTokens.Token

    /// What a lease block said, as far as the page needs it.
    struct Block {
        var mac: MACAddress?
        var held = true
        var hostName: [UInt8]?
        var ends: Int64?

        func lease(at address: IPAddress) -> Lease? {
            guard held, let mac else { return nil }
            return Lease(
                mac: mac, address: address, hostName: hostName.flatMap { LeaseText.hostName($0) }, expires: ends)
        }
    }

    /// A statement's first tokens: more are never needed, and a long one is not held.
    static let statementTokens = 8

    static func parse(_ bytes: [UInt8]) -> [Lease] {
        var tokens = ISCLeaseTokens(bytes)
        var table = LeaseTable()
        var statement: [Token] = []
        while let token = tokens.next() {
            switch token {
            case .semicolon, .close:
                statement.removeAll()
            case .open:
                if statement.count == 2, tokens.equals(statement[0], "lease"), case .word(let range) = statement[1],
                    let address = LeaseText.address(bytes, range)
                {
                    guard let block = block(&tokens) else { return table.leases }
                    table.record(.address(address), block.lease(at: address))
                } else if !skipBlock(&tokens) {
                    return table.leases
                }
                statement.removeAll()
            default:
                if statement.count < statementTokens { statement.append(token) }
            }
        }
        return table.leases
    }

    /// The statements of a lease block up to its `}`; nil when the file ends first.
    static func block(_ tokens: inout ISCLeaseTokens) -> Block? {
        var block = Block()
        var statement: [Token] = []
        while let token = tokens.next() {
            switch token {
            case .close:
                return block
            case .semicolon:
                apply(statement, tokens, to: &block)
                statement.removeAll()
            case .open:
                // `on commit { … }` and the like: nothing the page needs.
                guard skipBlock(&tokens) else { return nil }
                statement.removeAll()
            default:
                if statement.count < statementTokens { statement.append(token) }
            }
        }
        return nil
    }

    static func apply(_ statement: [Token], _ tokens: ISCLeaseTokens, to block: inout Block) {
        guard let first = statement.first else { return }
        if tokens.equals(first, "binding"), statement.count == 3, tokens.equals(statement[1], "state") {
            block.held = tokens.equals(statement[2], "active")
        } else if tokens.equals(first, "hardware"), statement.count == 3, tokens.equals(statement[1], "ethernet"),
            case .word(let range) = statement[2]
        {
            block.mac = LeaseText.mac(tokens.bytes, range)
        } else if tokens.equals(first, "client-hostname"), statement.count == 2, case .string(let text) = statement[1] {
            block.hostName = text
        } else if tokens.equals(first, "ends") {
            block.ends = ends(Array(statement.dropFirst()), tokens)
        }
    }

    /// `never`, `epoch N`, or `weekday yyyy/mm/dd hh:mm:ss` in UTC; nil for anything else.
    static func ends(_ words: [Token], _ tokens: ISCLeaseTokens) -> Int64? {
        let ranges = words.compactMap { token -> Range<Int>? in
            if case .word(let range) = token { range } else { nil }
        }
        guard ranges.count == words.count else { return nil }
        if ranges.count == 2, tokens.equals(words[0], "epoch") { return LeaseText.integer(tokens.bytes, ranges[1]) }
        guard ranges.count == 3,
            let date = LeaseText.fields(tokens.bytes, ranges[1], separator: UInt8(ascii: "/"), limit: 3),
            let time = LeaseText.fields(tokens.bytes, ranges[2], separator: UInt8(ascii: ":"), limit: 3),
            date.count == 3, time.count == 3
        else { return nil }
        let numbers = (date + time).map { LeaseText.integer(tokens.bytes, $0) }
        guard let year = numbers[0], let month = numbers[1], let day = numbers[2], let hour = numbers[3],
            let minute = numbers[4], let second = numbers[5],
            (1970...9999).contains(year), (1...12).contains(month),
            (1...Int64(CivilCalendar.daysInMonth(year: Int(year), month: Int(month)))).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = Int64(CivilCalendar.days(year: Int(year), month: Int(month), day: Int(day)))
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// Passes over a block whose `{` was just read, nested blocks included; false when the
    /// file ends inside it.
    static func skipBlock(_ tokens: inout ISCLeaseTokens) -> Bool {
        var depth = 1
        while let token = tokens.next() {
            if token == .open { depth += 1 }
            if token == .close {
                depth -= 1
                if depth == 0 { return true }
            }
        }
        return false
    }

    /// Whether `line` starts one of dhcpd's top-level statements: decides the format of a file.
    static func isStatementLine(_ bytes: [UInt8], _ line: Range<Int>) -> Bool {
        guard let fields = LeaseText.fields(bytes, line, limit: 64), let first = fields.first else { return false }
        if LeaseText.equals(bytes, first, "lease") {
            return fields.count >= 3 && LeaseText.equals(bytes, fields[2], "{")
        }
        return LeaseText.equals(bytes, first, "authoring-byte-order") || LeaseText.equals(bytes, first, "server-duid")
            || LeaseText.equals(bytes, first, "ia-na") || LeaseText.equals(bytes, first, "ia-ta")
            || LeaseText.equals(bytes, first, "ia-pd") || LeaseText.equals(bytes, first, "failover")
    }
}
