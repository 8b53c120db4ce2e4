import EventLoop
import Glibc
import SystemIO
import TestSupport

/// Set in the environment of a child started by `runSelfAsChild` to run the process-wide
/// signal scenario instead of the tests.
let signalChildVariable = "PG_EVENTLOOP_SIGNAL_CHILD"

/// Runs before `main` in every process of this test binary. In the child (and only there)
/// it runs `signalChildScenario` and exits with its result, so the test runner — whose
/// main thread would take the signal — never starts in that process.
@used @section(".init_array")
let signalChildHook: @convention(c) () -> Void = {
    guard let flag = getenv("PG_EVENTLOOP_SIGNAL_CHILD"), flag.pointee == UInt8(ascii: "1") else { return }
    _exit(signalChildScenario())
}

/// What the daemon does: block the signals before any thread exists, take them on a loop
/// through a signalfd. Exit status 0 when SIGUSR1, sent to the whole process, reached the
/// callback on the loop's thread; 1 when it did not (in time); 2 when set-up failed.
func signalChildScenario() -> Int32 {
    do {
        try Signals.block([SIGUSR1])
        let group = try EventLoopGroup(loopCount: 1, name: "child-loop", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let seen = Shared<[Bool]>([])
        try loop.runSync(timeout: 5_000_000_000) {
            _ = try SignalSource(loop: loop, signals: [SIGUSR1]) { _ in seen.update { $0.append(loop.inEventLoop) } }
        }
        guard kill(getpid(), SIGUSR1) == 0 else { return 2 }
        return waitUntil(timeout: 5_000_000_000, { !seen.value.isEmpty }) && seen.value == [true] ? 0 : 1
    } catch {
        return 2
    }
}

/// How a child process ended.
enum ChildStatus: Equatable {
    case exited(Int32)
    case signalled(Int32)
    case timedOut
}

/// Starts this test binary again with `environment` added and a clean signal mask (as a
/// service manager would start the daemon), and waits for it at most `timeout`.
func runSelfAsChild(environment extra: String, timeout: Nanoseconds) throws -> ChildStatus {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

    var environment: [UnsafeMutablePointer<CChar>?] = [strdup(extra)]
    var index = 0
    while let entry = environ[index] {
        environment.append(strdup(entry))
        index += 1
    }
    environment.append(nil)
    let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/proc/self/exe"), nil]
    defer { for pointer in environment + arguments { free(pointer) } }

    var child = pid_t()
    let result = posix_spawn(&child, "/proc/self/exe", nil, &attributes, arguments, environment)
    guard result == 0 else { throw SystemError("posix_spawn", errno: result) }

    var status: Int32 = 0
    let finished = waitUntil(timeout: timeout) { waitpid(child, &status, WNOHANG) == child }
    guard finished else {
        kill(child, SIGKILL)
        waitpid(child, &status, 0)
        return .timedOut
    }
    // WIFEXITED/WEXITSTATUS/WTERMSIG are macros Swift does not import.
    return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
}
