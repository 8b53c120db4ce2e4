import Locks

/// The distinct names each profile was blocked on in the current minute, up to a rate
/// (`hit_names_per_minute`, docs/sync.md#bounds): past it, the flush folds a new name into
/// its rule (`*.RULE`, or `*` for a reason without a rule), so a device asking random
/// names under a blocked domain makes one row a rule, not one a name. Names already seen
/// this minute keep their own rows. Holds a hash of each name, at most the rate a profile.
///
/// Used by the sync thread's flush only; the lock makes it `Sendable`.
public final class NameRate: Sendable {
    public let perMinute: Int
    private let state = Lock<State>(State())

    private struct State {
        var minute: Int64 = .min
        var seen: [String: Set<Int>] = [:]
    }

    public init(perMinute: Int) { self.perMinute = max(0, perMinute) }

    /// For each event of `window` in order, whether it is folded: a name not yet seen this
    /// minute when its profile has seen `perMinute` names already. Events already folded
    /// (by the window's bound) are not folded again. `now`: unix seconds.
    public func decide(_ window: HitWindow, now: Int64) -> [Bool] {
        let minute = now >= 0 ? now / 60 : (now - 59) / 60
        var folded: [Bool] = []
        folded.reserveCapacity(window.count)
        state.withLock { state in
            if state.minute != minute {
                state.minute = minute
                state.seen.removeAll()
            }
            var lastProfile: [UInt8] = []
            var profile = ""
            window.forEachName { profileBytes, name, names in
                guard names == 0 else {
                    folded.append(false)
                    return
                }
                if !lastProfile.elementsEqual(profileBytes) {
                    lastProfile = Array(profileBytes)
                    profile = String(decoding: profileBytes, as: UTF8.self)
                }
                var hasher = Hasher()
                hasher.combine(bytes: name)
                let hash = hasher.finalize()
                if state.seen[profile]?.contains(hash) == true {
                    folded.append(false)
                } else if state.seen[profile, default: []].count < perMinute {
                    state.seen[profile, default: []].insert(hash)
                    folded.append(false)
                } else {
                    folded.append(true)
                }
            }
        }
        return folded
    }
}
