import Locks

/// What the load did and what went wrong, shared by every load thread and the sampler.
final class SoakLedger: Sendable {
    enum Counter: String, CaseIterable, Sendable {
        case udpQueries = "udp"
        case tcpQueries = "tcp"
        case malformedDNS = "bad-dns"
        case connects = "connect"
        case plainRequests = "http"
        case malformedHeads = "bad-http"
        case idleOpened = "idle"
        case realClients = "dig/curl"
        case answersChecked = "checked"
        case swapAnswersChecked = "swap-checked"
        case policySwaps = "swaps"
        case sighups = "hup"
        case sigusr1s = "usr1"
        case apiPolicyChanges = "api-changes"
    }

    /// Blocks the load received for the hit name, by source: each one a hit the gateway
    /// must account for.
    enum HitSource: String, Sendable { case dns, proxy }

    private struct Tally {
        var counts: [Counter: Int] = [:]
        var hits: [HitSource: Int] = [:]
        var wrong = 0
        var unanswered = 0
        var examples: [String] = []
    }

    private let tally = Lock(Tally())
    /// Examples kept for the verdict: enough to see a pattern, not the whole run.
    static let examplesKept = 20

    func count(_ counter: Counter, _ amount: Int = 1) { tally.withLock { $0.counts[counter, default: 0] += amount } }

    func hit(_ source: HitSource) { tally.withLock { $0.hits[source, default: 0] += 1 } }

    /// An answer that contradicts the policy in force: an allowed name refused, a blocked
    /// one let through, or a wrong response code.
    func wrong(_ what: String) {
        tally.withLock {
            $0.wrong += 1
            if $0.examples.count < Self.examplesKept { $0.examples.append("wrong: " + what) }
        }
    }

    /// A request that got no answer at all within its timeout (on loopback, under a load
    /// the gateway is sized for, that is a refusal too).
    func unanswered(_ what: String) {
        tally.withLock {
            $0.unanswered += 1
            if $0.examples.count < Self.examplesKept { $0.examples.append("unanswered: " + what) }
        }
    }

    subscript(counter: Counter) -> Int { tally.withLock { $0.counts[counter] ?? 0 } }
    func hits(_ source: HitSource) -> Int { tally.withLock { $0.hits[source] ?? 0 } }
    var hitsMade: Int { tally.withLock { $0.hits.values.reduce(0, +) } }
    var wrongAnswers: Int { tally.withLock { $0.wrong } }
    var unansweredRequests: Int { tally.withLock { $0.unanswered } }
    var examples: [String] { tally.withLock { $0.examples } }

    /// `udp=… tcp=… …` for the sample lines.
    var summary: String {
        tally.withLock { tally in
            Counter.allCases.compactMap { counter in
                tally.counts[counter].map { "\(counter.rawValue)=\($0)" }
            }.joined(separator: " ") + " hits=\(tally.hits.values.reduce(0, +)) wrong=\(tally.wrong)"
                + " unanswered=\(tally.unanswered)"
        }
    }
}
