import DomainMatch

/// Who is asking: what a profile can be chosen by (docs/configuration.md#profiles). The DNS proxy knows the
/// address (and, through the neighbour table, the MAC); the HTTP proxy may also know a
/// proxy user.
public struct Client: Hashable, Sendable {
    public var address: IPAddress?
    /// From the neighbour table, when known.
    public var mac: MACAddress?
    public var proxyUser: String?

    public init(address: IPAddress? = nil, mac: MACAddress? = nil, proxyUser: String? = nil) {
        self.address = address
        self.mac = mac
        self.proxyUser = proxyUser
    }

    /// A client known by nothing, e.g. `check` on the command line.
    public static let anonymous = Client()
}
