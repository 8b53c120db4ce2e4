import DomainMatch

/// Who asks the child's page through the proxy (docs/requests-and-notifications.md#the-childs-page):
/// the device's address and MAC and the profile the proxy chose for it (a proxy user's
/// included). The proxy writes it into the request; the page believes it only from the
/// gateway's own addresses.
public struct ChildIdentity: Sendable, Equatable {
    public var address: IPAddress
    public var mac: MACAddress?
    public var profile: String

    public init(address: IPAddress, mac: MACAddress?, profile: String) {
        self.address = address
        self.mac = mac
        self.profile = profile
    }

    public static let addressField = "Phosra-Child-Address"
    public static let macField = "Phosra-Child-MAC"
    public static let profileField = "Phosra-Child-Profile"
    /// The fields' common start, lower case: a client's own are dropped.
    static let prefix = Array("phosra-child-".utf8)
}
