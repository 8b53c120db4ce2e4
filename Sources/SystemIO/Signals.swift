import Glibc

/// Process-wide signal set-up for the daemon.
///
/// Signals are taken through a signalfd (`SignalSource`) on a loop, which works only while
/// they are blocked in *every* thread: a thread that does not block one takes its default
/// action (SIGTERM: the process ends). Threads inherit their creator's mask, so the daemon
/// blocks them first thing in `main`, before any thread exists; `SystemThread` (and so
/// every loop thread) blocks them as well.
public enum Signals {
    /// Reload, interrupt, terminate, sync now, spare — and SIGPIPE, which splice and write
    /// on a dead socket raise and which must never end the daemon.
    public static let daemonSignals: [Int32] = [SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE]

    /// Blocks `signals` in the calling thread (and so in threads it creates afterwards).
    public static func block(_ signals: [Int32] = daemonSignals) throws(SystemError) {
        var set = set(of: signals)
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        if result != 0 { throw SystemError("pthread_sigmask", errno: result) }
    }

    /// SIGPIPE ignored process-wide: a write or splice to a closed peer then fails with EPIPE.
    public static func ignoreBrokenPipe() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    package static func set(of signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        return set
    }
}
