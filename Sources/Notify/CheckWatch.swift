import Locks

/// One of the gateway's own checks failing, as the daemon found it: `check` names it as
/// `doctor` does (`upstream`, `clock`, `web`, `firewall`), `subject` tells apart checks of
/// the same kind (an upstream's address), `what` and `fix` are `doctor`'s words.
public struct FailingCheck: Sendable, Equatable {
    public var check: String
    public var subject: String
    public var what: String
    public var fix: String

    public init(check: String, subject: String = "", what: String, fix: String) {
        self.check = check
        self.subject = subject
        self.what = what
        self.fix = fix
    }

    var key: String { subject.isEmpty ? check : check + ":" + subject }
}

/// Turns rounds of the daemon's checks into `trouble` events: a check is trouble once it
/// has failed in two rounds in a row (a probe lost once is not worth a parent's phone),
/// and makes one event per outage: its id carries the round it first failed in, so the
/// same outage found again is the same event, and a failure after a passing round is new.
public final class CheckWatch: Sendable {
    /// Five minutes between rounds: a probe of every upstream is a query each, and an
    /// outage worth a notification lasts longer than two rounds.
    public static let interval: Int64 = 300

    /// One round of checks; it may block for a few seconds (probes), never on a loop thread.
    private let checks: @Sendable () -> [FailingCheck]
    /// Each check that failed in the last round, and the round it first failed in.
    private let failing = Lock<[String: Int64]>([:])
    private let nextRound = Lock<Int64>(0)

    public init(checks: @escaping @Sendable () -> [FailingCheck]) {
        self.checks = checks
    }

    /// A round when one is due at `now` (wall seconds), and the events it makes.
    public func due(now: Int64, page: String?) -> [Notice] {
        let run = nextRound.withLock { next in
            guard now >= next else { return false }
            next = now + Self.interval
            return true
        }
        return run ? notices(round: checks(), now: now, page: page) : []
    }

    /// `round`: every check that failed in this round, found at `now`.
    public func notices(round: [FailingCheck], now: Int64, page: String?) -> [Notice] {
        failing.withLock { failing in
            var next: [String: Int64] = [:]
            var out: [Notice] = []
            for check in round {
                guard let since = failing[check.key] else {
                    next[check.key] = now
                    continue
                }
                next[check.key] = since
                out.append(Notices.checkFailing(check, since: since, now: now, page: page))
            }
            failing = next
            return out
        }
    }
}
