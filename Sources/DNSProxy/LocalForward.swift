import DNSUpstream
import DomainMatch

/// `ZONE=IP[:port]`: where `local_forward` sends a private zone (docs/dns.md#local-answers).
public struct LocalForward: Hashable, Sendable {
    public let zone: DomainName
    public let server: UpstreamSpec

    public init?(_ text: String) {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let zone = try? QueryName.parse(String(parts[0])),
            let server = UpstreamSpec(String(parts[1]))
        else { return nil }
        self.zone = zone
        self.server = server
    }
}
