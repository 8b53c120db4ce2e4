import Testing

extension Allocations {
    /// Whether a count here is the shipped daemon's: counted (no sanitizer) in a release
    /// build. A debug build allocates where the optimizer does not (a captured variable's
    /// box, a generic algorithm's closure, a dictionary's `default:` accessor), so a claim
    /// of "allocates nothing" is tested on the build that runs on the gateway, by
    /// `scripts/allocations`.
    public static var countedAsShipped: Bool {
        #if DEBUG
            false
        #else
            counted
        #endif
    }
}

extension Trait where Self == ConditionTrait {
    /// For a test that a path allocates nothing: it runs in a release build
    /// (`scripts/allocations`), where its count is the daemon's.
    public static var countsAllocationsAsShipped: Self {
        .enabled(if: Allocations.countedAsShipped, "counted in a release build: scripts/allocations")
    }
}

/// Keeps `value` alive as far as the optimizer knows: a call counted in a release build
/// whose result is dropped (`_ = f()`) may be removed whole, allocations and all.
@inline(never)
@_optimize(none)
public func blackHole<T>(_ value: T) {}
