// The uncontended cost of `Locks.Lock` beside a plain `Synchronization.Mutex`, one thread:
// scripts/bench-lock builds and runs it (docs/ARCHITECTURE.md#threads).
import Locks
import Synchronization

/// Both locks guard the same kind of value, in one object, as the package's tables do.
final class Pair: Sendable {
    let annotated = Lock([0])
    let plain = Mutex([0])
}

@inline(never) func viaLock(_ pair: Pair, _ count: Int) {
    for _ in 0..<count { pair.annotated.withLock { $0[0] &+= 1 } }
}

@inline(never) func viaMutex(_ pair: Pair, _ count: Int) {
    for _ in 0..<count { pair.plain.withLock { $0[0] &+= 1 } }
}

func nanoseconds(_ duration: Duration, per count: Int) -> Double {
    (Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9) / Double(count)
}

let pair = Pair()
let count = 20_000_000
let rounds = 12
var lockTimes: [Double] = []
var mutexTimes: [Double] = []
let clock = ContinuousClock()
// Alternating which goes first, so a frequency change or a neighbour's load hits both alike.
for round in 0..<rounds {
    if round % 2 == 0 {
        mutexTimes.append(nanoseconds(clock.measure { viaMutex(pair, count) }, per: count))
        lockTimes.append(nanoseconds(clock.measure { viaLock(pair, count) }, per: count))
    } else {
        lockTimes.append(nanoseconds(clock.measure { viaLock(pair, count) }, per: count))
        mutexTimes.append(nanoseconds(clock.measure { viaMutex(pair, count) }, per: count))
    }
}
func line(_ name: String, _ times: [Double]) -> String {
    let sorted = times.sorted()
    let median = (sorted[rounds / 2 - 1] + sorted[rounds / 2]) / 2
    return "\(name): median \((median * 100).rounded() / 100) ns, best \((sorted[0] * 100).rounded() / 100) ns"
}
print("lock and unlock, uncontended, \(rounds) rounds of \(count):")
print(line("Mutex.withLock", mutexTimes))
print(line("Lock.withLock ", lockTimes))
