import Foundation
import Glibc
import TestSupport
import Testing

/// Headless Chromium under Selenium (Debian's `python3-selenium` and `chromium-driver`),
/// one step at a time through `Tests/Browser/page_driver.py`: each call writes a step and
/// waits for its answer, so a test checks the gateway between two clicks. Installed by
/// `scripts/install-deps --test`; without them these tests fail, never skip.
final class PageBrowser {
    static let python = "/usr/bin/python3"
    static let script = GateRun.checkout.appendingPathComponent("Tests/Browser/page_driver.py").path

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors: String
    private var buffered: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts the driver; `prefix` runs it inside something (`ip netns exec NAME`), and
    /// `chromiumFlags` are given to Chromium besides the driver's own (a proxy).
    init(
        scratch: ScratchDirectory, prefix: (path: String, arguments: [String])? = nil, chromiumFlags: [String] = []
    ) throws {
        let profile = scratch.path("chromium-\(UInt32.random(in: 0...UInt32.max))")
        errors = scratch.path("page-driver.log")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        if let prefix {
            process.executableURL = URL(fileURLWithPath: prefix.path)
            process.arguments = prefix.arguments + [Self.python, Self.script, profile] + chromiumFlags
        } else {
            process.executableURL = URL(fileURLWithPath: Self.python)
            process.arguments = [Self.script, profile] + chromiumFlags
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: errors)
        try process.run()
        guard try answer(timeout: 60) as? String == "ready" else {
            throw Failure(description: "the page driver did not start: \(log)")
        }
    }

    deinit { close() }

    var log: String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }

    func close() {
        guard process.isRunning else { return }
        _ = try? send(["op": "quit"], timeout: 10)
        try? input.fileHandleForWriting.close()
        if !waitUntil(timeout: 10_000_000_000, interval: 50_000_000, { !self.process.isRunning }) {
            process.terminate()
        }
        process.waitUntilExit()
    }

    @discardableResult
    func send(_ step: [String: Any], timeout: Int32 = 30) throws -> Any? {
        let line = try JSONSerialization.data(withJSONObject: step) + Data("\n".utf8)
        try input.fileHandleForWriting.write(contentsOf: line)
        return try answer(timeout: timeout)
    }

    func get(_ url: String) throws { try send(["op": "get", "url": url]) }
    func fill(_ css: String, _ text: String) throws { try send(["op": "fill", "css": css, "text": text]) }
    func click(_ css: String, text: String? = nil) throws {
        var step: [String: Any] = ["op": "click", "css": css]
        if let text { step["text"] = text }
        try send(step)
    }
    /// Clicks the button labelled `text` inside the first `within` whose text holds `containing`.
    func click(button text: String, within: String, containing: String) throws {
        try send(["op": "click_in", "within": within, "contains": containing, "css": "button", "text": text])
    }
    func select(_ css: String, value: String) throws { try send(["op": "select", "css": css, "value": value]) }
    func text(_ css: String) throws -> String { try send(["op": "text", "css": css]) as? String ?? "" }
    func source() throws -> String { try send(["op": "source"]) as? String ?? "" }
    func url() throws -> String { try send(["op": "url"]) as? String ?? "" }

    /// A screenshot of the whole page at `width` CSS pixels, kept in
    /// `.build/test-artifacts/NAME`; with `PHOSRA_GATE_SCREENSHOTS=1` also in
    /// `docs/images/NAME`, where the README shows it (a run that means to refresh them).
    func screenshot(_ name: String, width: Int) throws {
        try send(["op": "size", "width": width, "height": 800])
        let artefacts = GateRun.checkout.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: artefacts, withIntermediateDirectories: true)
        let path = artefacts.appendingPathComponent(name).path
        try send(["op": "screenshot", "path": path])
        guard ProcessInfo.processInfo.environment["PHOSRA_GATE_SCREENSHOTS"] == "1" else { return }
        let images = GateRun.checkout.appendingPathComponent("docs/images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        let kept = images.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: kept)
        try FileManager.default.copyItem(atPath: path, toPath: kept)
    }

    private func answer(timeout seconds: Int32) throws -> Any? {
        let line = try readLine(timeout: seconds)
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw Failure(description: "the page driver answered \(String(decoding: line, as: UTF8.self))")
        }
        guard object["ok"] as? Bool == true else {
            throw Failure(description: "the page driver failed: \(object["error"] ?? "?")")
        }
        return object["value"]
    }

    private func readLine(timeout seconds: Int32) throws -> [UInt8] {
        let descriptor = output.fileHandleForReading.fileDescriptor
        let deadline = Date(timeIntervalSinceNow: TimeInterval(seconds))
        while true {
            if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<end])
                buffered.removeSubrange(...end)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw Failure(description: "the page driver gave no answer in \(seconds) s: \(log)") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { throw Failure(description: "the page driver ended: \(log)") }
            buffered += chunk[..<count]
        }
    }
}
