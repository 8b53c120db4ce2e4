import Config
import DNSProxy
import DNSUpstream
import DNSWire
import EventLoop
import SystemIO
import TLS

extension UpstreamClient: UpstreamResolving {}

/// Makes each loop's upstream client. The TLS context (CA store or `ca_file`) is built
/// once, at start, and shared: reading a CA bundle is slow work for no loop thread.
package enum Upstreams {
    /// `clock`: while it says the wall time is not yet set, DNS-over-TLS certificates are
    /// checked without their validity period (docs/operations.md#a-clock-without-rtc).
    static func factory(
        options: RunOptions, log: Logger, metrics: UpstreamMetrics? = nil, clock: FlooredClock? = nil
    ) throws(GatewayError) -> Daemon.UpstreamFactory {
        var context: TLSContext?
        if options.caFile != nil || options.upstreams.contains(where: { $0.transport == .tls })
            || options.localForward.contains(where: { $0.server.transport == .tls })
        {
            var skip: (@Sendable () -> Bool)?
            if let clock { skip = { clock.unsynchronised } }
            do { context = try TLSContext(caFile: options.caFile, skipValidityPeriod: skip) } catch {
                throw .usage("--ca-file: \(error)")
            }
        }
        let timeout = Nanoseconds(max(options.upstreamTimeout, 1)) * 1_000_000
        let shared = context
        return { loop throws(GatewayError) in
            let client: UpstreamClient
            do {
                client = try UpstreamClient(loop: loop, upstreams: options.upstreams, timeout: timeout, tls: shared)
            } catch {
                throw .usage("upstream: \(error)")
            }
            client.onEvent = { event in log.warn("upstream", [("event", "\(event)")]) }
            client.metrics = metrics
            return client
        }
    }
}
