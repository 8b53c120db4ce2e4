import Foundation

/// `dig` (bind9-dnsutils) as a client, its answer parsed into what tests assert on.
public struct DigAnswer: CustomStringConvertible {
    public let output: String

    public init(output: String) { self.output = output }
    public var status: String? { field(after: "status: ", until: ",") }
    public var flags: [String] { (field(after: ";; flags: ", until: ";") ?? "").split(separator: " ").map(String.init) }
    /// EDE lines: `15 (Blocked): (category:adult)` → `["15 (Blocked): (category:adult)"]`.
    public var extendedErrors: [String] {
        output.split(separator: "\n").filter { $0.hasPrefix("; EDE: ") }.map { String($0.dropFirst(7)) }
    }
    /// The ANSWER section's records as `name ttl class type data` lines.
    public var answers: [String] { section("ANSWER") }
    public var authority: [String] { section("AUTHORITY") }
    /// The ADDITIONAL section's records (the OPT record is dig's pseudosection, not here).
    public var additional: [String] { section("ADDITIONAL") }
    /// The data of each answer (last field(s) after the type).
    public var answerData: [String] {
        answers.map { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst(4).joined(separator: " ")
        }
    }
    public var answerTTLs: [Int] {
        answers.compactMap { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        }
    }
    /// The OPT pseudosection's line after `; EDNS: ` (`version: 0, flags: do; udp: 1232`);
    /// nil when the answer has no OPT.
    public var edns: String? { field(after: "; EDNS: ", until: "\n") }
    /// The OPT's flags as dig names them (`do`); nil when the answer has no OPT.
    public var ednsFlags: [String]? {
        guard let edns, let start = edns.range(of: "flags:") else { return nil }
        return edns[start.upperBound...].prefix { $0 != ";" }.split(separator: " ").map(String.init)
    }
    public var description: String { output }

    private func field(after marker: String, until end: Character) -> String? {
        guard let range = output.range(of: marker) else { return nil }
        return String(output[range.upperBound...].prefix { $0 != end && $0 != "\n" })
    }

    private func section(_ name: String) -> [String] {
        guard let start = output.range(of: ";; \(name) SECTION:\n") else { return [] }
        return output[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.isEmpty }.map(String.init)
    }
}

public enum Dig {
    /// `dig @127.0.0.1 -p PORT NAME TYPE` with `options` (e.g. `+tcp`, `+noedns`).
    public static func query(
        _ name: String, _ type: String = "A", port: UInt16, server: String = "127.0.0.1",
        options: [String] = []
    ) throws -> DigAnswer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dig")
        process.arguments = ["@\(server)", "-p", "\(port)", name, type, "+tries=1", "+time=4"] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return DigAnswer(output: String(decoding: data, as: UTF8.self))
    }
}
