import DomainMatch
import Policy

/// `web_allow_clients` (docs/parent-page.md#security): the devices that may reach the page at
/// all, by address or CIDR, MAC address, or the profile the gateway gives them. Empty: every
/// client that reaches the listener. A device not on the list gets a 403 before the login
/// page, so a child's device cannot even guess passwords.
public struct PageClients: Sendable, Equatable {
    public enum Entry: Sendable, Hashable, CustomStringConvertible {
        case client(ClientEntry)
        /// The devices a profile governs, as the DNS side chooses it (MAC, assignment, address).
        case profile(String)

        /// An address, CIDR or MAC address; any other word is a profile's name (the
        /// configuration checks that one exists).
        public init?(_ text: String) {
            if let entry = ClientEntry(text) {
                self = .client(entry)
            } else if !text.isEmpty, text.unicodeScalars.allSatisfy(Self.isNameScalar) {
                self = .profile(text)
            } else {
                return nil
            }
        }

        public var description: String {
            switch self {
            case .client(let entry): entry.description
            case .profile(let name): name
            }
        }

        private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "-", "_": true
            default: false
            }
        }
    }

    public let entries: [Entry]
    private let ranges: [AddressRange]
    private let macs: Set<MACAddress>
    private let profiles: Set<String>

    public static let everyone = PageClients([])

    public init(_ entries: [Entry]) {
        self.entries = entries
        var ranges: [AddressRange] = []
        var macs: Set<MACAddress> = []
        var profiles: Set<String> = []
        for entry in entries {
            switch entry {
            case .client(.range(let range)): ranges.append(range)
            case .client(.mac(let mac)): macs.insert(mac)
            case .profile(let name): profiles.insert(name)
            }
        }
        self.ranges = ranges
        self.macs = macs
        self.profiles = profiles
    }

    public var isEveryone: Bool { entries.isEmpty }

    /// Whether deciding needs the client's MAC address: a MAC entry, or a profile (which
    /// may be chosen by one).
    public var needsMAC: Bool { !macs.isEmpty || !profiles.isEmpty }

    /// Whether `client` may reach the page; `profile` names the profile that governs a
    /// client now, asked only when an address or MAC did not already let it in (nil when
    /// only `default_profile` does: a child's device whose MAC the gateway cannot see
    /// just now, from an address it never used, must not pass as the default's).
    public func allows(_ client: Client, profile: (Client) -> String?) -> Bool {
        if isEveryone { return true }
        if let address = client.address, ranges.contains(where: { $0.contains(address) }) { return true }
        if let mac = client.mac, macs.contains(mac) { return true }
        guard !profiles.isEmpty, let name = profile(client) else { return false }
        return profiles.contains(name)
    }
}
