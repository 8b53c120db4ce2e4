import Metrics

/// The HTTP proxy's counts for `/metrics` (docs/operations.md#metrics), shared by every
/// loop: connections accepted (refused ones too), tunnels started and open, and the bytes
/// relayed through tunnels (both directions, as they move), connections shed at the cap.
public final class ProxyMetrics: Sendable {
    public let connections = Counter()
    public let tunnels = Counter()
    public let tunnelsOpen = Gauge()
    public let tunnelBytes = Counter()
    /// Connections closed at the total cap to admit another.
    public let shed = Counter()

    public init() {}
}
