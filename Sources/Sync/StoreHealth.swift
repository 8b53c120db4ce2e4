import Synchronization

/// Says a failing store (a full disk) once, however many parts of the sync hit it and
/// however often they retry, and once more when a write succeeds again: a filter on the
/// sync's log that lets `store_failed` through only when the store was healthy and
/// `store_writable` only when it was not. Every failed write is counted all the same, for
/// `/metrics`.
public final class StoreHealth: Sendable {
    private let failing = Atomic<Bool>(false)
    private let failures = Atomic<Int>(0)

    public init() {}

    /// Store writes that failed since the start, said in the log or not.
    public var failedWrites: Int { failures.load(ordering: .relaxed) }

    public func filtering(
        _ log: @escaping (String, [(String, String)]) -> Void
    ) -> (String, [(String, String)]) -> Void {
        { [self] event, fields in
            switch event {
            case "store_failed":
                failures.add(1, ordering: .relaxed)
                guard !failing.exchange(true, ordering: .relaxed) else { return }
            case "store_writable":
                guard failing.exchange(false, ordering: .relaxed) else { return }
            default: break
            }
            log(event, fields)
        }
    }
}
