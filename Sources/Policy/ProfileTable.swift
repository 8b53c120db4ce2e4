/// Which policy governs which client (docs/configuration.md#profiles). Today one profile covers everyone; the
/// selection by proxy user, MAC and CIDR plugs in here without changing any caller.
public struct ProfileTable: Sendable {
    public let fallback: PolicyRules

    public init(single rules: PolicyRules) {
        fallback = rules
    }

    public func rules(for client: Client) -> PolicyRules { fallback }
}
