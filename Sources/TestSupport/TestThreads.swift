import EventLoop
import Glibc
import Locks
import SystemIO
import Testing

/// The threads that tests which block run on. Most integration tests block their thread:
/// they wait for a child process (the daemon, dig, curl), read sockets and poll for
/// conditions. Swift Testing runs a test on Swift's cooperative pool, whose width is the
/// number of cores, so on a two-core machine two blocked tests held every thread and the
/// rest of the suite queued behind them while the cores stood idle. Tests marked
/// `.blocking` run here instead: a fixed number of threads (`PHOSRA_TEST_THREADS`, or one
/// more than the cores), each running one job to its end. More, and the daemons under test
/// run short of CPU: their background threads (SCHED_IDLE) wait for an idle core, and on a
/// cold first run a tunnel took over 10 s with two per core.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    // Sendable: the queue is under `pending`'s lock and the semaphore is thread-safe.
    public static let shared = TestThreads(count: configuredWidth)

    private let pending = Lock<[UnownedJob]>([])
    private let ready: UnsafeMutablePointer<sem_t>

    /// `PHOSRA_TEST_THREADS` when set to a positive number, else one more than the online cores.
    public static var configuredWidth: Int {
        if let text = getenv("PHOSRA_TEST_THREADS").map({ String(cString: $0) }), let width = Int(text), width > 0 {
            return width
        }
        return max(3, sysconf(Int32(_SC_NPROCESSORS_ONLN)) + 1)
    }

    init(count: Int) {
        ready = .allocate(capacity: 1)
        sem_init(ready, 0, 0)
        for index in 0..<count {
            _ = try? SystemThread.spawn(name: "test-\(index)") { [self] in work() }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pending.withLock { $0.append(job) }
        sem_post(ready)
    }

    private func work() {
        while true {
            while sem_wait(ready) != 0 {}
            guard let job = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs each test of a suite on `TestThreads` (see there why): for suites whose tests
/// block their thread.
public struct BlockingTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == BlockingTrait {
    /// The suite's tests block their thread: run them on `TestThreads`.
    public static var blocking: Self { Self() }
}
