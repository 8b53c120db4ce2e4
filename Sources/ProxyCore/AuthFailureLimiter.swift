import DomainMatch
import Locks

/// Failed proxy logins per client address (docs/proxy.md#proxy-authentication): at most
/// `maxFailures` in a window of `window` nanoseconds that opens with the first failure;
/// after that every attempt with credentials is refused (`429`) until the window is over.
/// Each failure costs the gateway a scrypt run, so this bounds both guessing and the
/// gateway's work. Shared by every loop (a client's connections land on several), so it
/// is a class behind one lock: it is asked only for requests that carry credentials.
///
/// Time comes in with each call (the loop's monotonic clock, in nanoseconds); nothing here
/// reads a clock. Memory is bounded: at most `capacity` addresses are tracked; when a new
/// one fails and the table is full, windows that are over go first, then the oldest.
public final class AuthFailureLimiter: Sendable {
    public enum Verdict: Equatable, Sendable {
        case allowed
        /// Too many failures: the attempt is refused unchecked, and the window ends in
        /// `retryAfter` nanoseconds.
        case tooMany(retryAfter: UInt64)
    }

    private struct Window {
        var start: UInt64
        var failures: Int
    }

    public static let defaultMaxFailures = 10
    public static let defaultWindow: UInt64 = 60_000_000_000

    public let maxFailures: Int
    public let window: UInt64
    public let capacity: Int
    private let windows = Lock<[IPAddress: Window]>([:])

    public init(
        maxFailures: Int = defaultMaxFailures, window: UInt64 = defaultWindow, capacity: Int = 4096
    ) {
        self.maxFailures = max(1, maxFailures)
        self.window = window
        self.capacity = max(1, capacity)
    }

    /// Whether `client` may have its credentials checked at `now`. Ask before verifying,
    /// also when the credentials would be right: a client that has used up its failures
    /// learns nothing more until its window is over.
    public func check(_ client: IPAddress, now: UInt64) -> Verdict {
        windows.withLock { windows in
            guard let entry = windows[client], let left = remaining(entry, now: now), entry.failures >= maxFailures
            else { return .allowed }
            return .tooMany(retryAfter: left)
        }
    }

    /// `client` presented wrong (or malformed) credentials at `now`.
    public func recordFailure(_ client: IPAddress, now: UInt64) {
        windows.withLock { windows in
            if let entry = windows[client], remaining(entry, now: now) != nil {
                windows[client]?.failures = entry.failures + 1
                return
            }
            if windows[client] == nil, windows.count >= capacity { makeRoom(&windows, now: now) }
            windows[client] = Window(start: now, failures: 1)
        }
    }

    /// How many addresses are tracked now (windows that are over may still be counted).
    public var trackedCount: Int { windows.withLock { $0.count } }

    /// Nanoseconds left in `entry`'s window at `now`; nil when it is over.
    private func remaining(_ entry: Window, now: UInt64) -> UInt64? {
        let elapsed = now >= entry.start ? now - entry.start : 0
        return elapsed < window ? window - elapsed : nil
    }

    /// Only when the table is full, so its linear scans are paid by an address that is
    /// failing its login (next to a scrypt run), never on a success.
    private func makeRoom(_ windows: inout [IPAddress: Window], now: UInt64) {
        windows = windows.filter { remaining($0.value, now: now) != nil }
        guard windows.count >= capacity, let oldest = windows.min(by: { $0.value.start < $1.value.start }) else {
            return
        }
        windows[oldest.key] = nil
    }
}
