/// What a device kept to the web (`egress = web`) may still reach besides DNS and TCP 80
/// and 443: the ports phones and consoles need for push messages, calls and the time,
/// each as its vendor or standard documents it (docs/network.md#egress lists the same
/// entries with their sources; a test compares the two). Any open port can carry a tunnel
/// to a server that listens on it, so the set stays with the ports the services document.
public enum EgressBuiltIn {
    public struct Entry: Sendable {
        public let rule: EgressRule
        /// Who needs it, as docs/network.md names it.
        public let service: String
        /// The public document that gives the port.
        public let source: String
    }

    static func tcp(_ ports: ClosedRange<UInt16>, _ service: String, _ source: String) -> Entry {
        Entry(rule: EgressRule(.tcp, ports), service: service, source: source)
    }

    static func udp(_ ports: ClosedRange<UInt16>, _ service: String, _ source: String) -> Entry {
        Entry(rule: EgressRule(.udp, ports), service: service, source: source)
    }

    static let apple = "https://support.apple.com/101555"
    static let applePorts = "https://support.apple.com/103229"
    static let firebase = "https://firebase.google.com/docs/cloud-messaging/network-configuration"
    static let meet = "https://support.google.com/a/answer/1279090"
    static let teams = "https://learn.microsoft.com/microsoft-365/enterprise/urls-and-ip-address-ranges"
    static let stun = "https://www.rfc-editor.org/rfc/rfc8489#section-18.6"
    static let ntp = "https://www.rfc-editor.org/rfc/rfc5905"
    static let xbox = "https://support.microsoft.com/kb/908874"

    public static let entries: [Entry] = [
        tcp(5223...5223, "Apple push notifications (APNs)", apple),
        tcp(2197...2197, "Apple push notifications (APNs)", apple),
        udp(3478...3497, "FaceTime and iMessage", applePorts),
        udp(16384...16387, "FaceTime", applePorts),
        udp(16393...16402, "FaceTime", applePorts),
        tcp(5228...5230, "Google push (Firebase Cloud Messaging)", firebase),
        udp(3478...3478, "Google Meet", meet),
        udp(19302...19309, "Google Meet", meet),
        udp(3478...3481, "Microsoft Teams", teams),
        tcp(3478...3478, "STUN and TURN over TCP (calls that fall back from UDP)", stun),
        udp(123...123, "NTP (the device's clock)", ntp),
        udp(88...88, "Xbox network", xbox),
        udp(3074...3074, "Xbox network", xbox),
        tcp(3074...3074, "Xbox network", xbox),
    ]
}

/// Port ranges of one transport merged where they overlap or touch, in order: what an
/// nftables anonymous set takes (it refuses overlapping intervals).
func mergedPorts(_ ranges: [ClosedRange<UInt16>]) -> [ClosedRange<UInt16>] {
    var merged: [ClosedRange<UInt16>] = []
    for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
        if let last = merged.last, Int(range.lowerBound) <= Int(last.upperBound) + 1 {
            merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
        } else {
            merged.append(range)
        }
    }
    return merged
}

/// `80`, or `3478-3497`, as nftables writes a port or an interval.
func portText(_ range: ClosedRange<UInt16>) -> String {
    range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)"
}
