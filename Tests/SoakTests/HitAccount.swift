import Foundation
import Store
import TestSupport

/// Where the hits on the soak's hit name ended up: delivered to the API (each batch
/// counted once, however often a lost reply made the gateway send it) or still in the
/// store's queue. Taken after `run` has stopped (SIGTERM flushes the last counts).
struct HitAccount: CustomStringConvertible {
    var delivered = 0
    var queued = 0
    var batchesReceived = 0
    var batchesResent = 0
    var deadLettered = 0

    var total: Int { delivered + queued }
    var description: String {
        "delivered \(delivered) in \(batchesReceived) batches (\(batchesResent) received again after a lost reply), "
            + "queued \(queued), dead-lettered rows \(deadLettered)"
    }

    static func take(_ home: SoakGateway) throws -> HitAccount {
        var account = HitAccount()
        guard let device = home.api.devices.first(where: { $0.childID == home.childID }) else {
            throw SoakError("the API has no device for the synced profile")
        }
        var seen = Set<String>()
        for report in home.api.reports where report.reportType == "blocked_attempt" && report.deviceID == device.id {
            let batch = report.payload["batch_id"]?.string ?? ""
            guard seen.insert(batch).inserted else {
                account.batchesResent += 1
                continue
            }
            account.batchesReceived += 1
            account.delivered += count(report.payload["events"]?.array ?? []) {
                ($0["domain"]?.string, $0["client"]?.string, $0["count"]?.int ?? 0)
            }
        }

        // Every row left, batch by batch: a batch the API already has (its reply was lost)
        // is not counted twice. The store is a copy nobody else uses now: completing the
        // batches only walks it.
        let now = Int64(Date().timeIntervalSince1970)
        let store = try Store.open(directory: home.state, now: now)
        defer { store.close() }
        account.deadLettered = try store.queueCounts(profile: "synced").deadLettered
        for _ in 0..<100_000 {
            guard let batch = try store.nextBatch(profile: "synced", maxEvents: 10_000, maxBytes: 1 << 30, now: now)
            else { break }
            if !seen.contains(batch.id) { account.queued += count(batch.events) { ($0.domain, $0.client, $0.count) } }
            try store.completeBatch(id: batch.id)
        }
        return account
    }

    /// The summed counts of the events for the hit name from the synced device.
    private static func count<Event>(_ events: [Event], _ fields: (Event) -> (String?, String?, Int)) -> Int {
        events.reduce(0) { sum, event in
            let (domain, client, count) = fields(event)
            return domain == SoakNames.hit && client == SoakNames.syncedClient ? sum + count : sum
        }
    }
}
