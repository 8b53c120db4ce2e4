import SystemIO

/// Since when bytes have waited for a device that takes none of them
/// (docs/proxy.md#stalled-devices): `stall_timeout` is measured from it. Told after every
/// write toward the device whether bytes still wait and whether any moved; progress of a
/// single byte starts the measure again. Loop-confined, a value in its owner.
struct StallWatch {
    /// Nil while nothing waits for the device.
    private(set) var since: Nanoseconds?

    /// After a write toward the device: `waiting`, bytes still wait for it; `moved`, it
    /// took some. `now` is read only when the measure starts again.
    mutating func note(waiting: Bool, moved: Bool, now: () -> Nanoseconds) {
        if !waiting {
            since = nil
        } else if moved || since == nil {
            since = now()
        }
    }
}
