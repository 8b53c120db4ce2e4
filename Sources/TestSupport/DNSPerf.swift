import Foundation

/// dnsperf (Debian `dnsperf`) sending a steady load to one DNS server for a bounded time:
/// `-l SECONDS` at most `-Q QPS`, from `-c CLIENTS` sockets, each query at most 2 s.
public final class DNSPerfLoad: @unchecked Sendable {
    // Sendable: `process` and `output` are made in init; only the test thread calls `finish`.
    public static let path = "/usr/bin/dnsperf"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    private let process = Process()
    private let output = Pipe()

    /// Starts the load; `queries` is a file of `NAME TYPE` lines, sent in turn.
    public init(
        server: String = "127.0.0.1", port: UInt16, queries: String, seconds: Int, qps: Int, clients: Int = 4
    ) throws {
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments = [
            "-s", server, "-p", "\(port)", "-d", queries, "-l", "\(seconds)", "-Q", "\(qps)", "-c", "\(clients)",
            "-t", "2",
        ]
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// A run not finished (a test that failed before it could) is stopped with its test.
    deinit { if process.isRunning { process.terminate() } }

    /// Ends the run now, as Ctrl-C does, and reads its totals (of what it sent until then).
    public func stop() -> DNSPerfReport {
        if process.isRunning { process.interrupt() }
        return finish()
    }

    /// Waits for the run to end (it ends by itself after its seconds) and reads its totals.
    public func finish() -> DNSPerfReport {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return DNSPerfReport(text)
    }
}

/// The totals of a dnsperf run, and its whole report.
public struct DNSPerfReport: CustomStringConvertible {
    public var completed = 0
    public var lost = 0
    public var codes: [String: Int] = [:]
    public let description: String

    public init(_ text: String) {
        description = text
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let words = line.split(separator: " ").map(String.init)
            if line.hasPrefix("Queries completed:"), words.count > 2 { completed = Int(words[2]) ?? 0 }
            if line.hasPrefix("Queries lost:"), words.count > 2 { lost = Int(words[2]) ?? -1 }
            if line.hasPrefix("Response codes:") {
                let pairs = line.dropFirst("Response codes:".count).split(separator: ",")
                for pair in pairs {
                    let parts = pair.split(separator: " ")
                    if parts.count >= 2 { codes[String(parts[0])] = Int(parts[1]) ?? 0 }
                }
            }
        }
    }
}
