import Foundation
import Store

/// A queued hit as the store holds it once the daemon has flushed (SIGTERM flushes).
struct HitSummary: Equatable, CustomStringConvertible {
    let domain: String
    let reason: String
    let source: String
    let client: String
    let count: Int

    var description: String { "\(domain) \(reason) \(source) ×\(count) from \(client)" }

    /// The queued rows of profile `default` (read after the daemon has stopped).
    static func read(stateDirectory: String) throws -> [HitSummary] {
        let store = try Store.open(directory: stateDirectory, now: Int64(Date().timeIntervalSince1970))
        defer { store.close() }
        guard
            let batch = try store.nextBatch(
                profile: "default", maxEvents: 10_000, maxBytes: 1 << 24,
                now: Int64(Date().timeIntervalSince1970))
        else { return [] }
        return batch.events.map {
            HitSummary(domain: $0.domain, reason: $0.reason, source: $0.source, client: $0.client, count: $0.count)
        }
    }
}
