import Foundation

/// The real `phosra-gate run`, started on a free loopback port with its own state
/// directory, ready when it has logged its listeners.
public final class GateRun: @unchecked Sendable {
    // Sendable: every stored property is a `let` (the daemon guards its own state).
    public let daemon: ChildDaemon
    public let port: UInt16
    public let stateDirectory: String

    /// The binary SwiftPM built beside the test bundle.
    public static let binary: String = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("phosra-gate").path
    }()

    /// The checkout (three levels above this file).
    public static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The environment that starts the daemon's wall clock at `instant` (ISO 8601, e.g.
    /// `2026-12-01T12:00:00Z`); it then advances in real time. For tests whose outcome
    /// depends on the time of day (downtime, schedules): they pass at any hour.
    public static func wallClock(_ instant: String) -> [String: String] { ["PHOSRA_GATE_TEST_CLOCK": instant] }

    /// Starts `run` with `arguments` plus `--dns-listen 127.0.0.1:PORT` and `--state-dir`
    /// unless they are given; waits for readiness (`waitReady`). `binary` is the build to
    /// run: the one beside the tests unless told (the soak runs the shipped release build).
    public init(
        _ arguments: [String], scratch: ScratchDirectory, port: UInt16? = nil, waitReady: Bool = true,
        cwd: URL? = nil, environment: [String: String] = [:], binary: String = GateRun.binary
    ) throws {
        self.port = port ?? FreePort.tcpAndUDP()
        stateDirectory = scratch.path("state-\(self.port)")
        let words = Self.withDefaults(arguments, port: self.port, stateDirectory: stateDirectory)
        // A Swift binary exec'd with libfaketime preloaded straight from a parent without
        // it loses its arguments (libfaketime 0.9.10); through env(1), one exec later, it does not.
        daemon =
            environment["LD_PRELOAD"] == nil
            ? try ChildDaemon(binary, ["run"] + words, environment: environment, cwd: cwd)
            : try ChildDaemon("/usr/bin/env", [binary, "run"] + words, environment: environment, cwd: cwd)
        if waitReady, !daemon.waitFor("event=listening", timeout: 20) {
            let log = daemon.stderr
            daemon.stop()
            throw GateRunError(message: "phosra-gate run did not become ready:\n\(log)")
        }
    }

    /// `arguments` plus `--dns-listen 127.0.0.1:PORT`, `--state-dir` and `--timezone UTC`
    /// unless they are given, and no HTTP proxy unless the test asks for one: a checkout's
    /// default (127.0.0.1:3128) would make every test daemon bind the same port.
    public static func withDefaults(_ arguments: [String], port: UInt16, stateDirectory: String) -> [String] {
        var words = arguments
        if !words.contains("--dns-listen") { words += ["--dns-listen", "127.0.0.1:\(port)"] }
        if !words.contains("--state-dir") { words += ["--state-dir", stateDirectory] }
        if !words.contains("--timezone") { words += ["--timezone", "UTC"] }
        if !words.contains("--proxy-listen") && !words.contains(where: { $0.hasPrefix("--proxy-listen=") }) {
            words += ["--proxy-listen="]
        }
        return words
    }

    public func dig(_ name: String, _ type: String = "A", _ options: [String] = []) throws -> DigAnswer {
        try Dig.query(name, type, port: port, options: options)
    }

    public var log: String { daemon.stderr }
}

public struct GateRunError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
