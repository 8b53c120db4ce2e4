import Metrics

/// The HTTP proxy's counts for `/metrics` (docs/operations.md#metrics), shared by every
/// loop: connections accepted (refused ones too), tunnels started and open, and the bytes
/// relayed through tunnels (both directions, as they move).
public final class ProxyMetrics: Sendable {
    public let connections = Counter()
    public let tunnels = Counter()
    public let tunnelsOpen = Gauge()
    public let tunnelBytes = Counter()

    public init() {}
}
