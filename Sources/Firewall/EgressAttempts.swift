import DomainMatch
import FoundationEssentials
import Policy

/// A refused attempt as the table remembers it: an element of `egress_refused4` or
/// `egress_refused6` (Ruleset+Egress.swift), read back from `nft -j list set`.
public struct EgressAttempt: Sendable, Equatable {
    public var client: IPAddress
    /// `tcp` or `udp`.
    public var transport: EgressRule.Transport
    public var port: UInt16
    /// Seconds until the element leaves the set; it was added `timeout - expires` ago.
    public var expires: Int

    public init(client: IPAddress, transport: EgressRule.Transport, port: UInt16, expires: Int) {
        self.client = client
        self.transport = transport
        self.port = port
        self.expires = expires
    }

    /// What a hit names: `udp/5353`.
    public var name: String { "\(transport.rawValue)/\(port)" }
}

/// Reads the output of `nft -j list set inet phosra_gate egress_refused4` (or 6).
public enum EgressAttempts {
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let problem: String
        public var description: String { "nft -j list set: \(problem)" }
    }

    /// The elements of the set in `json`. An element that is not an address, a protocol
    /// and a port is skipped: nft wrote it, and one odd element should not hide the rest.
    public static func parse(_ json: [UInt8]) throws(ParseError) -> [EgressAttempt] {
        let document: Document
        do { document = try JSONDecoder().decode(Document.self, from: Data(json)) } catch {
            throw ParseError(problem: "not the JSON nft writes (\(error))")
        }
        var attempts: [EgressAttempt] = []
        for case let set? in document.nftables.map(\.set) {
            for element in set.elem ?? [] {
                let (value, expires) = element.unwrapped
                guard let parts = value.concat, parts.count == 3, case .text(let addressText) = parts[0],
                    let client = IPAddress(addressText), let transport = transport(parts[1]), let port = port(parts[2])
                else { continue }
                attempts.append(
                    EgressAttempt(client: client, transport: transport, port: port, expires: expires ?? 0))
            }
        }
        return attempts
    }

    private static func transport(_ value: Scalar) -> EgressRule.Transport? {
        switch value {
        case .text(let text): EgressRule.Transport(rawValue: text)
        case .number(6): .tcp
        case .number(17): .udp
        case .number: nil
        }
    }

    private static func port(_ value: Scalar) -> UInt16? {
        switch value {
        case .number(let number): UInt16(exactly: number)
        case .text(let text): UInt16(text)
        }
    }

    struct Document: Decodable {
        let nftables: [Item]
    }

    struct Item: Decodable {
        let set: SetBody?
    }

    struct SetBody: Decodable {
        let elem: [Element]?
    }

    /// An element with a timeout is `{"elem": {"val": …, "expires": N}}`; without, the value.
    enum Element: Decodable {
        case timed(Value, expires: Int?)
        case plain(Value)

        struct Timed: Decodable {
            let elem: Inner
        }

        struct Inner: Decodable {
            let val: Value
            let expires: Int?
        }

        init(from decoder: any Decoder) throws {
            if let timed = try? Timed(from: decoder) {
                self = .timed(timed.elem.val, expires: timed.elem.expires)
            } else {
                self = .plain(try Value(from: decoder))
            }
        }

        var unwrapped: (Value, Int?) {
            switch self {
            case .timed(let value, let expires): (value, expires)
            case .plain(let value): (value, nil)
            }
        }
    }

    struct Value: Decodable {
        let concat: [Scalar]?
    }

    enum Scalar: Decodable, Equatable {
        case text(String)
        case number(Int)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }
}

/// Which attempts read from the table are new since the last read, and the bound on hits
/// (docs/network.md#egress): an element stays a minute (`add` never extends it), so one
/// whose end moved later is a new element — the same device trying the same port again
/// after the last one expired. At most `perDeviceLimit` new attempts of one device count
/// in a minute, so a device scanning every port makes a few hits, not thousands. Time is
/// passed in (seconds on a monotonic clock).
public struct EgressTally: Sendable {
    public static let perDeviceLimit = 10

    private struct Key: Hashable {
        var client: IPAddress
        var transport: EgressRule.Transport
        var port: UInt16
    }

    /// When each element seen last ends.
    private var ends: [Key: Int64] = [:]
    /// Each device's counted attempts in its current minute.
    private var devices: [IPAddress: (start: Int64, count: Int)] = [:]

    public init() {}

    /// The attempts of `read` (one read of both sets) not counted before, within the bound.
    public mutating func fresh(_ read: [EgressAttempt], now: Int64) -> [EgressAttempt] {
        ends = ends.filter { $0.value + 2 >= now }
        devices = devices.filter { now - $0.value.start < 60 }
        var counted: [EgressAttempt] = []
        for attempt in read {
            let key = Key(client: attempt.client, transport: attempt.transport, port: attempt.port)
            let end = now + Int64(attempt.expires)
            // `expires` is whole seconds and reads are not in step with it: the same element
            // reads up to a second either way.
            if let known = ends[key], end <= known + 2 { continue }
            ends[key] = end
            var device = devices[attempt.client] ?? (now, 0)
            guard device.count < Self.perDeviceLimit else { continue }
            device.count += 1
            devices[attempt.client] = device
            counted.append(attempt)
        }
        return counted
    }
}
