import Glibc
import Metrics
import SystemIO

/// The listeners that serve only the LAN, as `/metrics` labels what each refused.
public enum LANListener: Int, CaseIterable, Sendable {
    case dnsUDP, dnsTCP, proxy, transparent

    public var label: String {
        switch self {
        case .dnsUDP: "dns_udp"
        case .dnsTCP: "dns_tcp"
        case .proxy: "proxy"
        case .transparent: "transparent"
        }
    }
}

/// The interfaces whose traffic is served (`lan_interfaces`, plus loopback: the gateway's
/// own queries and tools on the host), and what the listeners refused from any other
/// (docs/network.md#who-is-served). Shared by every loop; each loop reads the interface
/// indexes through its own `ArrivalFilter`.
public final class LANInterfaces: Sendable {
    /// The configured names and `lo`; a name ending in `*` (`wlan*`) stands for every
    /// interface whose name starts with what is before it, as nftables reads it.
    public let names: [String]
    private let refusals: [Counter]

    public init(_ names: [String]) {
        self.names = names.contains("lo") ? names : names + ["lo"]
        refusals = LANListener.allCases.map { _ in Counter() }
    }

    /// Packets (UDP) and connections (TCP) from another interface, since the start.
    public func refused(_ listener: LANListener) -> Int { refusals[listener.rawValue].value }

    func countRefusal(_ listener: LANListener) { refusals[listener.rawValue].add() }
}

/// One loop's view of which interface indexes are the LAN's. Loop-confined (not
/// `Sendable`); made on the loop that uses it.
///
/// - The indexes of `LANInterfaces.names` are read (`if_nameindex`) at first use and
///   again when older than `maximumAge`, so a LAN interface made anew (a bridge recreated
///   by the network manager gets a new index) is served again at the latest then.
/// - An index not among them reads them again at once, at most once per
///   `minimumInterval`: a LAN interface that appears is served within a second, and a
///   flood from the WAN costs one read a second, not one a packet.
/// - A packet or connection whose interface the kernel did not say is refused.
public final class ArrivalFilter {
    public static let defaultMaximumAge: Nanoseconds = 10_000_000_000
    public static let defaultMinimumInterval: Nanoseconds = 1_000_000_000

    public let interfaces: LANInterfaces
    let maximumAge: Nanoseconds
    let minimumInterval: Nanoseconds
    /// The LAN's interface indexes at the last read; the names that do not exist now have none.
    private(set) var indexes: [UInt32] = []
    private var readAt: Nanoseconds?

    public init(
        _ interfaces: LANInterfaces, maximumAge: Nanoseconds = ArrivalFilter.defaultMaximumAge,
        minimumInterval: Nanoseconds = ArrivalFilter.defaultMinimumInterval
    ) {
        self.interfaces = interfaces
        self.maximumAge = maximumAge
        self.minimumInterval = minimumInterval
    }

    /// Whether what arrived on interface `index` is served; a refusal is counted under
    /// `listener`. `now`: the monotonic time, read once per batch by the caller.
    public func admits(_ index: UInt32?, on listener: LANListener, now: Nanoseconds) -> Bool {
        guard let index else {
            interfaces.countRefusal(listener)
            return false
        }
        let known = indexes.contains(index)
        var stale = true
        if let readAt {
            let age = now >= readAt ? now - readAt : 0
            stale = age >= maximumAge || (!known && age >= minimumInterval)
        }
        if stale {
            read(now)
            if indexes.contains(index) { return true }
        } else if known {
            return true
        }
        interfaces.countRefusal(listener)
        return false
    }

    /// The miss path: system calls and allocation are allowed here.
    private func read(_ now: Nanoseconds) {
        readAt = now
        // Every interface with its index, in one netlink dump; nil only when out of memory
        // or descriptors, and then the indexes last read stay in force.
        guard let all = if_nameindex() else { return }
        defer { if_freenameindex(all) }
        indexes.removeAll(keepingCapacity: true)
        var entry = all
        while entry.pointee.if_index != 0, let name = entry.pointee.if_name {
            if Self.matches(String(cString: name), interfaces.names) { indexes.append(entry.pointee.if_index) }
            entry += 1
        }
    }

    /// Whether interface `name` is one of `patterns`: equal, or starting with a pattern's
    /// text before its final `*`.
    static func matches(_ name: String, _ patterns: [String]) -> Bool {
        patterns.contains { pattern in
            pattern.hasSuffix("*") ? name.hasPrefix(pattern.dropLast()) : name == pattern
        }
    }
}
