import Foundation
import TestSupport
import Testing

/// The block page as a child sees it: real headless Chromium pointed at the proxy
/// (`--proxy-server`), its rendered DOM checked, and a screenshot kept in
/// `.build/test-artifacts/` as an artefact of the run. `scripts/install-deps --test`
/// installs Chromium; without it these tests fail rather than skip.
@Suite(.serialized, .blocking)
struct BlockPageBrowserTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func aBlockedSiteShowsTheBlockPage() throws {
        let gate = try fixture.start(ProxyFixture.policy(), ["--gateway-name", "Living room"])
        let browser = Chromium(proxyPort: fixture.proxyPort, profile: fixture.scratch.path("chromium"))
        let dom = try browser.dumpDOM("http://www.adult.example/videos?x=1&y=2")
        #expect(dom.contains("<h1>This site is blocked</h1>"), "\(dom)")
        #expect(dom.contains("<p class=\"site\">www.adult.example</p>"))
        #expect(dom.contains("This site is in a category that is blocked: adult content."))
        #expect(dom.contains("<code>category:adult</code>"))
        #expect(dom.contains("<tr><th>Time</th><td>"))
        #expect(dom.contains("http://www.adult.example/videos?x=1&amp;y=2"))
        #expect(dom.contains("Blocked by phosra-gate on Living room."))
        let artefact = try Chromium.artefact("block-page.png")
        try browser.screenshot("http://www.adult.example/", to: artefact)
        #expect(FileManager.default.fileExists(atPath: artefact))
        _ = gate
    }

    @Test func inDowntimeThePageSaysWhenTheSiteIsAllowedAgain() throws {
        let gate = try fixture.start(
            ProxyFixture.policy(screenTime: PolicyDocuments.downtime("11:57", "12:03")),
            wallClock: PolicyDocuments.noon)
        let browser = Chromium(proxyPort: fixture.proxyPort, profile: fixture.scratch.path("chromium"))
        let dom = try browser.dumpDOM("http://origin.test:\(fixture.origin.port)/homework")
        #expect(dom.contains("It is downtime: the internet is paused for now."), "\(dom)")
        #expect(dom.contains("<code>downtime</code>"))
        // The daemon's clock started at noon (UTC); the window ends at 12:03.
        #expect(dom.contains("<tr><th>Allowed again</th><td>") && dom.contains("12:03"), "\(dom)")
        try browser.screenshot(
            "http://origin.test:\(fixture.origin.port)/homework", to: try Chromium.artefact("downtime-page.png"))
        #expect(fixture.origin.connectionsAccepted == 0)
        _ = gate
    }

    @Test func aHostWithMarkupCharactersIsShownEscaped() throws {
        let gate = try fixture.start()
        let browser = Chromium(proxyPort: fixture.proxyPort, profile: fixture.scratch.path("chromium"))
        let dom = try browser.dumpDOM(#"http://a&b"c'd.example/"#)
        #expect(dom.contains("<h1>This address is not valid</h1>"), "\(dom)")
        #expect(dom.contains(#"<p class="site">a&amp;b"c'd.example</p>"#), "\(dom)")
        _ = gate
    }
}

/// Headless Chromium through the proxy, with a profile of its own and background
/// services off (what it still fetches goes to the proxy, which cannot resolve it).
struct Chromium {
    static let path = "/usr/bin/chromium"

    let proxyPort: UInt16
    let profile: String

    /// Where a screenshot is kept after the run: `.build/test-artifacts/NAME`.
    static func artefact(_ name: String) throws -> String {
        let directory = GateRun.checkout.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    func dumpDOM(_ url: String) throws -> String { try run(["--dump-dom", url]) }

    func screenshot(_ url: String, to file: String) throws {
        _ = try run(["--screenshot=\(file)", "--window-size=900,640", url])
    }

    private func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments =
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=\(profile)", "--proxy-server=http://127.0.0.1:\(proxyPort)",
            ] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        nonisolated(unsafe) var data = Data()
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            data = output.fileHandleForReading.readDataToEndOfFile()
            readerDone.signal()
        }.start()
        if !waitUntil(timeout: 20_000_000_000, interval: 20_000_000, { !process.isRunning }) { process.terminate() }
        process.waitUntilExit()
        readerDone.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
