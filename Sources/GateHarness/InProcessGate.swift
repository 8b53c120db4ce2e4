import Commands
import Foundation
import Gateway
import Glibc
import SystemIO
import TestSupport

/// `phosra-gate run` inside the test's process, on a clock the test moves: what a test of
/// the binary waits real seconds for (a check's 2 s, a five-minute round, a summary at
/// 20:00) is a step of `clock` here. The daemon is the binary's own code
/// (`RunCommand.serve`) with its loops, control thread, sync and notifier, all on `clock`;
/// only the process's signals are left to the test: `signal` stands in for `kill`, and
/// `stop` drains and stops the daemon as SIGTERM does. Clients stay real (dig, curl,
/// sockets); time a socket's deadline in the HTTP client waits is still real time. What
/// is the process's is the test's: the open-file limit the daemon raises, and what
/// `/metrics` says of resident memory and open files.
package final class InProcessGate: @unchecked Sendable {
    // Sendable: every stored property is a `let`; what the daemon's thread sets is behind `state`.
    package let clock: ManualClock
    package let port: UInt16
    package let stateDirectory: String
    private let logPath: String
    private let logDescriptor: Int32
    private let thread: SystemThread
    private let state = Shared<State>(.starting)
    private let stopping = Shared(false)

    private enum State: Sendable {
        case starting
        case running(Daemon)
        /// `run` returned: the daemon stopped, or never started (the error, with the log).
        case ended(failure: String?)
    }

    /// Starts `run` with `arguments` plus `--dns-listen 127.0.0.1:PORT`, `--state-dir`,
    /// `--timezone UTC` and no HTTP proxy unless they are given (as `GateRun` does; none of
    /// them when `defaults` is false, for a `--config` file that says them), and returns
    /// once it is ready (every listener bound, every profile's policy in force). The clock
    /// starts at the real wall time unless told (what `status` and `hits` run beside it
    /// read as recent is then recent) and moves only when the test moves it.
    /// `stateDirectory`: the one the arguments name, when they name one (without
    /// `defaults`); else the default's, in `scratch`.
    package init(
        _ arguments: [String], scratch: ScratchDirectory, port: UInt16? = nil, defaults: Bool = true,
        stateDirectory: String? = nil, clock: ManualClock = ManualClock(wall: SystemClock().wall())
    ) throws {
        self.clock = clock
        self.port = port ?? FreePort.tcpAndUDP()
        self.stateDirectory = stateDirectory ?? scratch.path("state-\(self.port)")
        logPath = scratch.path("gate-\(self.port).log")
        logDescriptor = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard logDescriptor >= 0 else { throw GateRunError(message: "cannot open \(logPath): errno \(errno)") }
        let words =
            defaults ? GateRun.withDefaults(arguments, port: self.port, stateDirectory: self.stateDirectory) : arguments
        // As the binary does: a write to a socket its peer closed is an error, not the end
        // of the (test) process.
        Signals.ignoreBrokenPipe()
        let state = self.state
        let embedding = Serve.Embedding(logDescriptor: logDescriptor) { daemon in
            state.update { $0 = .running(daemon) }
        }
        thread = try SystemThread.spawn(name: "pg-test-gate") { [words] in
            var failure: String?
            do { try RunCommand.serve(words, clock: clock, embedding: embedding) } catch {
                failure = "phosra-gate run: \(error)"
            }
            state.update { $0 = .ended(failure: failure) }
        }
        let started = waitFor(timeout: .seconds(20), interval: 1_000_000) { () -> Bool? in
            switch state.value {
            case .starting: nil
            case .running: true
            case .ended: false
            }
        }
        guard started == true else {
            stop()
            var failure = "did not become ready in 20 s"
            if case .ended(let why?) = state.value { failure = why }
            throw GateRunError(message: "\(failure)\n\(log)")
        }
    }

    deinit { stop() }

    private var daemon: Daemon? {
        guard case .running(let daemon) = state.value else { return nil }
        return daemon
    }

    /// Time passes on the daemon's clock: `delta` in one step. Returns once every thread of
    /// the daemon waiting on the clock has taken the step in and is waiting again, and each
    /// loop has had a turn since (`ManualClock.advanceSettled`): whatever came due in that
    /// time has run, so a test may check that something did not happen. False when a
    /// thread was still busy after 10 s.
    @discardableResult
    package func advance(by delta: Nanoseconds) -> Bool {
        let settled = clock.advanceSettled(by: delta)
        daemon?.waitForTurns()
        return settled
    }

    /// Returns once each loop has finished the turn it is in: what had reached the
    /// listeners' sockets before this call (a connection, bytes) has been taken by then
    /// (accepted, read, its timers started).
    package func waitForTurns() { daemon?.waitForTurns() }

    /// What `kill(pid, number)` does to the binary: SIGHUP reloads, SIGUSR1 syncs now,
    /// SIGTERM drains and stops (prefer `stop`, which waits for it).
    package func signal(_ number: Int32) { daemon?.deliver(number) }

    /// Drains and stops the daemon as SIGTERM does, and returns once `run` has returned
    /// (the store closed, the state directory unlocked): true, or false when it was still
    /// running after 30 s. The drain's 5 s for connections still open are the clock's:
    /// stepped 50 ms at a time until the daemon is gone. Again after a stop: nothing.
    @discardableResult
    package func stop() -> Bool {
        let first = stopping.update { stopping in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return ended }
        var told = false
        let stopped = waitUntil(timeout: .seconds(30)) {
            if ended { return true }
            // A daemon still starting is told once it is up.
            if !told, let daemon {
                daemon.deliver(SIGTERM)
                told = true
            }
            clock.advance(by: 50_000_000)
            return false
        }
        // A daemon still running keeps its log open (the descriptor is not to be reused).
        if stopped {
            thread.join()
            _ = Glibc.close(logDescriptor)
        } else {
            thread.detach()
        }
        return stopped
    }

    /// Proxy and transparent connections the daemon holds open now.
    package var openProxyConnections: Int { daemon?.openProxyConnections() ?? 0 }

    /// Proxy login checks (scrypt, real time) waiting or running now.
    package var loginChecksWaiting: Int { daemon?.loginChecksWaiting ?? 0 }

    /// Whether the daemon is running: started, and not stopped.
    package var isRunning: Bool { daemon != nil }

    private var ended: Bool {
        if case .ended = state.value { return true }
        return false
    }

    package func dig(_ name: String, _ type: String = "A", _ options: [String] = []) throws -> DigAnswer {
        try Dig.query(name, type, port: port, options: options)
    }

    /// Every line the daemon logged so far.
    package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
