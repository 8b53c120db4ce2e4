import Notify
import Synchronization

/// When the daemon's rounds in the background last finished, for `/metrics`: a flush of
/// hits or a notifier that has stalled shows there, and a test waits for the next round
/// instead of for a time.
package final class Rounds: Sendable {
    /// The wall time (unix seconds) of the last flush of hits whose followers have run:
    /// the notifications' look at what it stored and the day's summaries.
    let flushed = Atomic<Int64>(0)
    /// How many such flushes there have been.
    let flushes = Atomic<Int>(0)
    /// The notifier, when `notify_url` is set: its last round.
    let notifier: Notifier?

    init(notifier: Notifier?) { self.notifier = notifier }
}
