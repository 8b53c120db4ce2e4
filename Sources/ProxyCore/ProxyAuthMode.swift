/// `proxy_auth` (docs/proxy.md#proxy-authentication): what a proxy client without
/// credentials gets when no MAC or address entry of a profile covers it.
public enum ProxyAuthMode: String, CaseIterable, Sendable {
    /// `default_profile`; credentials, when sent, still choose their profile.
    case optional
    /// `407`: such a client must authenticate as a profile's `proxy_user`.
    case required
}
