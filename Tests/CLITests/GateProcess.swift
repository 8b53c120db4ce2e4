import Foundation

/// Runs the real `phosra-gate` binary that SwiftPM built beside the test bundle.
struct GateProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The products directory: where this test bundle runs from.
    static let binary: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("phosra-gate")
    }()

    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func run(_ arguments: [String], cwd: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let cwd { process.currentDirectoryURL = cwd }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A scratch directory removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("phosra-gate-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }
}

/// A CompiledPolicy document as the server shapes it, with the web and time parts given.
func policyJSON(level: String = "", safeSearch: Bool = false, blocked: [String] = [], allowed: [String] = [],
                categories: [String] = [], screenTime: String = #""daily_limit_minutes": 0"#) -> String {
    func list(_ items: [String]) -> String {
        "[" + items.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "]"
    }
    return """
        {"version": 3, "child_id": "00000000-0000-0000-0000-0000000000c1", "child_age": 9, "age_group": "Child",
         "policy_id": "00000000-0000-0000-0000-0000000000p1", "status": "active", "generated_at": "2026-03-31T14:05:09.4Z",
         "content_filter": {"age_rating": "9+", "max_ratings": {}, "blocked_apps": [], "allowed_apps": [], "allowlist_mode": false},
         "screen_time": {\(screenTime), "always_allowed_apps": []},
         "purchases": {"require_approval": false, "block_iap": false},
         "privacy": {"location_sharing_enabled": false, "profile_visibility": "", "account_creation_approval": false,
                     "data_sharing_restricted": false},
         "social": {"chat_mode": "", "dm_restriction": "", "multiplayer_mode": ""}, "notifications": {},
         "web_filter": {"level": "\(level)", "safe_search": \(safeSearch), "blocked_domains": \(list(blocked)),
                        "allowed_domains": \(list(allowed)), "blocked_categories": \(list(categories))}}
        """
}
