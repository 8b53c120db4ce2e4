import DNSWire
import DomainMatch
import Policy

/// docs/dns.md#what-answers-may-carry: a cached answer cut to what this client may be
/// given, each time it is served (the cache is shared by every profile, and a policy or
/// `rebind_allow` may have changed since it was stored).
extension QueryPipeline {
    /// A cached answer with records removed, and why, when its answer section went empty.
    struct Screened {
        let entry: CacheEntry
        let error: ExtendedDNSError?
    }

    /// `entry` without the records of names `profile` blocks (when `inspect`: the same
    /// names whose chain is inspected) and, for a public `name`, without its local
    /// addresses; nil when nothing goes, which for an answer without screening is one test
    /// and for one whose names are all allowed is their decisions, no allocation.
    func screen(
        _ entry: CacheEntry, asked name: DomainName?, profile: Profile, inspect: Bool, _ snapshot: ProxySnapshot,
        _ now: Now
    ) -> Screened? {
        guard let screening = entry.screening else { return nil }
        let rebinding = !screening.localRecords.isEmpty && snapshot.rebinding.applies(to: name)
        var blocked: [Decision?] = []
        if inspect, profile.rules.filtered, !screening.names.isEmpty {
            let engine = snapshot.engine
            let local = engine.zone.localDateTime(at: now.unixSeconds)
            for index in 0..<screening.names.count {
                // By the lists, not the clock, as the chain is: the question passed the cutoff.
                let decision = engine.decide(
                    screening.names[index], profile: profile, at: now.unixSeconds, local: local, applyCutoff: false)
                guard decision.action == .block else { continue }
                if blocked.isEmpty { blocked = Array(repeating: nil, count: screening.names.count) }
                blocked[index] = decision
            }
        }
        guard rebinding || !blocked.isEmpty, var message = try? DNSMessage.parse(entry.response) else { return nil }
        let answers = message.answers.count
        let authorities = message.authorities.count
        var removed = Array(repeating: false, count: answers + authorities + message.additionals.count)
        // The first reason an answer record went, for the EDE when none is left.
        var reason: String?
        func remove(_ ordinal: UInt16, _ why: @autoclosure () -> String) {
            guard Int(ordinal) < removed.count, !removed[Int(ordinal)] else { return }
            removed[Int(ordinal)] = true
            if reason == nil, ordinal < screening.answerCount { reason = why() }
        }
        if rebinding {
            for ordinal in screening.localRecords { remove(ordinal, Reason.localDestination.rawValue) }
        }
        if !blocked.isEmpty {
            for reference in screening.references {
                if let decision = blocked[Int(reference.name)] { remove(reference.ordinal, decision.reasonText) }
            }
        }
        message.answers = message.answers.indices.filter { !removed[$0] }.map { message.answers[$0] }
        message.authorities = message.authorities.indices.filter { !removed[answers + $0] }
            .map { message.authorities[$0] }
        message.additionals = message.additionals.indices.filter { !removed[answers + authorities + $0] }
            .map { message.additionals[$0] }
        // Records taken out: no longer the answer the upstream vouched for (RFC 4035 §3.2.3).
        message.header.authenticData = false
        let response = message.serialized(compress: true)
        let withoutECH = entry.stripped == nil ? nil : (try? DNSPacket.removingECH(from: response)) ?? nil
        let cut = CacheEntry(
            response: response, withoutECH: withoutECH, storedAt: entry.storedAt, ttl: entry.ttl, chain: entry.chain,
            rcode: entry.rcode)
        let emptied = answers > 0 && message.answers.isEmpty
        return Screened(
            entry: cut, error: emptied ? ExtendedDNSError(code: .blocked, text: reason ?? "") : nil)
    }
}
