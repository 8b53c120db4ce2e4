import DomainMatch
import Locks

/// Failed proxy logins (docs/proxy.md#proxy-authentication), counted three ways:
///
/// - per client address: at most `maxFailures` in a window of `window` nanoseconds that
///   opens with the first failure; after that every attempt with credentials is refused
///   (`429`) until the window is over;
/// - per IPv6 /64, whose addresses a device picks at will: `networkMaxFailures` a window,
///   else `429`;
/// - per proxy user, across addresses (`UserLoginDelays`): past `UserLoginDelays.freeChecks`
///   each further check for that user waits for a turn that comes later each time.
///
/// A device that has logged in as a user before (`KnownLoginDevices`, by MAC address or
/// else address) skips the /64 and user limits for that user: a flood of guesses from
/// elsewhere does not keep the child out. Its own address's count still applies.
///
/// Each failure costs the gateway a scrypt run, so this bounds both guessing and the
/// gateway's work. Shared by every loop (a client's connections land on several), so it
/// is a class behind one lock: it is asked only for requests that carry credentials.
///
/// Time comes in with each call (the loop's monotonic clock, in nanoseconds); nothing here
/// reads a clock. Memory is bounded: at most `capacity` addresses and as many /64s are
/// tracked (when a new one fails and the table is full, windows that are over go first,
/// then the oldest), and the users and known devices have bounds of their own.
public final class AuthFailureLimiter: Sendable {
    public enum Verdict: Equatable, Sendable {
        case allowed
        /// Too many failures: the attempt is refused unchecked, and the window ends (or the
        /// user's next turn comes) in `retryAfter` nanoseconds.
        case tooMany(retryAfter: UInt64)
        /// The user has had too many checks: this one starts once `by` nanoseconds
        /// have passed, its turn.
        case delayed(by: UInt64)
    }

    public static let defaultMaxFailures = 10
    public static let defaultWindow: UInt64 = 60_000_000_000

    public let maxFailures: Int
    public let networkMaxFailures: Int
    public let window: UInt64
    public let capacity: Int

    private struct State {
        var addresses: FailureWindows<IPAddress>
        var networks: FailureWindows<UInt64>
        var users: UserLoginDelays
        var known: KnownLoginDevices
    }

    private let state: Lock<State>

    /// - Parameters:
    ///   - networkMaxFailures: failures a window from one IPv6 /64; by default three times
    ///     `maxFailures` (a home's devices share the LAN's /64).
    ///   - users: the per-user limit; `UserLoginDelays()` by default.
    public init(
        maxFailures: Int = defaultMaxFailures, window: UInt64 = defaultWindow, capacity: Int = 4096,
        networkMaxFailures: Int? = nil, users: UserLoginDelays = UserLoginDelays(),
        known: KnownLoginDevices = KnownLoginDevices()
    ) {
        self.maxFailures = max(1, maxFailures)
        self.networkMaxFailures = max(1, networkMaxFailures ?? 3 * maxFailures)
        self.window = window
        self.capacity = max(1, capacity)
        state = Lock(
            State(
                addresses: FailureWindows(window: window, capacity: self.capacity),
                networks: FailureWindows(window: window, capacity: self.capacity), users: users, known: known))
    }

    /// Whether `client` may have its credentials checked at `now`, by its address's count
    /// alone. Ask before verifying, also when the credentials would be right: a client that
    /// has used up its failures learns nothing more until its window is over.
    public func check(_ client: IPAddress, now: UInt64) -> Verdict {
        state.withLock { state in
            state.addresses.exceeded(client, limit: maxFailures, now: now).map { .tooMany(retryAfter: $0) } ?? .allowed
        }
    }

    /// Whether `client` (the device `device`) may have credentials for `user` checked at
    /// `now`, and when: its address, then (unless the device has logged in as `user`
    /// before) its /64 and the user's turn. A `.delayed` verdict has taken the turn.
    public func check(_ client: IPAddress, user: String, device: LoginDevice, now: UInt64) -> Verdict {
        state.withLock { state in
            if let left = state.addresses.exceeded(client, limit: maxFailures, now: now) {
                return .tooMany(retryAfter: left)
            }
            if state.known.contains(user: user, device: device, now: now) { return .allowed }
            if let network = Self.network(client),
                let left = state.networks.exceeded(network, limit: networkMaxFailures, now: now)
            {
                return .tooMany(retryAfter: left)
            }
            return state.users.turn(for: user, now: now)
        }
    }

    /// `client` presented wrong (or malformed) credentials at `now`. (A user's checks are
    /// counted when they start, by `check(_:user:device:now:)`.)
    public func recordFailure(_ client: IPAddress, now: UInt64) {
        state.withLock { state in
            state.addresses.record(client, now: now)
            if let network = Self.network(client) { state.networks.record(network, now: now) }
        }
    }

    /// `device` proved `user`'s password at `now`: from now on it skips the /64 and user limits.
    public func recordSuccess(user: String, device: LoginDevice, now: UInt64) {
        state.withLock { $0.known.insert(user: user, device: device, now: now) }
    }

    /// How many addresses are tracked now (windows that are over may still be counted).
    public var trackedCount: Int { state.withLock { $0.addresses.count } }

    /// The /64 of an IPv6 address (not of an IPv4-mapped one); nil for IPv4.
    static func network(_ address: IPAddress) -> UInt64? {
        guard case .v6(let high, _) = address.unmapped else { return nil }
        return high
    }
}

/// The device a login came from, as `KnownLoginDevices` remembers it: its MAC address when
/// the neighbour table knows it, else its address (a whole IPv6 address: the LAN shares
/// its /64).
public enum LoginDevice: Hashable, Sendable {
    case mac(MACAddress)
    case address(IPAddress)

    public init(_ address: IPAddress, mac: MACAddress?) {
        self = mac.map(LoginDevice.mac) ?? .address(address.unmapped)
    }
}

/// Failures per key in windows that open with the first failure; bounded in entries.
struct FailureWindows<Key: Hashable> {
    private struct Window {
        var start: UInt64
        var failures: Int
    }

    let window: UInt64
    let capacity: Int
    private var windows: [Key: Window] = [:]

    init(window: UInt64, capacity: Int) {
        self.window = window
        self.capacity = capacity
    }

    var count: Int { windows.count }

    /// Nanoseconds left in `key`'s window when it holds `limit` failures or more; else nil.
    func exceeded(_ key: Key, limit: Int, now: UInt64) -> UInt64? {
        guard let entry = windows[key], entry.failures >= limit else { return nil }
        return remaining(entry, now: now)
    }

    mutating func record(_ key: Key, now: UInt64) {
        if let entry = windows[key], remaining(entry, now: now) != nil {
            windows[key]?.failures = entry.failures + 1
            return
        }
        if windows[key] == nil, windows.count >= capacity { makeRoom(now: now) }
        windows[key] = Window(start: now, failures: 1)
    }

    /// Nanoseconds left in `entry`'s window at `now`; nil when it is over.
    private func remaining(_ entry: Window, now: UInt64) -> UInt64? {
        let elapsed = now >= entry.start ? now - entry.start : 0
        return elapsed < window ? window - elapsed : nil
    }

    /// Only when the table is full, so its linear scans are paid by a client that is
    /// failing its login (next to a scrypt run), never on a success.
    private mutating func makeRoom(now: UInt64) {
        windows = windows.filter { remaining($0.value, now: now) != nil }
        guard windows.count >= capacity, let oldest = windows.min(by: { $0.value.start < $1.value.start }) else {
            return
        }
        windows[oldest.key] = nil
    }
}
