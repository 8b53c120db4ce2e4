import Metrics

/// How each upstream resolver does, for `/metrics` (docs/operations.md#metrics): the time
/// from sending a question to its accepted answer, and the failed attempts (timeouts,
/// network errors, SERVFAIL/REFUSED that failed over), by upstream as configured. Shared
/// by every loop's client.
public final class UpstreamMetrics: Sendable {
    public let latency = LabeledHistogram(labelName: "upstream", bounds: Histogram.upstreamBounds)
    public let errors = LabeledCounter(labelNames: ["upstream"], limit: 64)

    public init() {}
}
