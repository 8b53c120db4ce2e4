import Foundation
import Store
import TestSupport
import Testing

/// Five devices (127.0.0.11 to .15) ask 1,000 random names a second in all under a blocked
/// domain, against the real `run` with a registered profile (docs/sync.md#bounds). The API
/// refuses every report for the first third, so the queue fills to its bound, then takes
/// them. Throughout: the queue and the history at or under their bounds, the state
/// directory under the bound docs/sync.md states, the resident set within 5 MB of its
/// level after the first minute (or the first half of a shorter run); at the end the
/// reports hold no more named events than the rate allows, the rest folded into
/// `*.reddit.com` with their names, and the rows merged away counted in `merged_events`.
///
/// 80 s in the suite; `PHOSRA_GATE_HIT_SOAK_MINUTES=10` runs the issue's ten minutes.
@Suite(.serialized, .blocking) struct HitBoundSoakTests {
    static let queueMax = 250
    static let historyMax = 600
    static let namesPerMinute = 300
    static let devices = (11...15).map { "127.0.0.\($0)" }
    static let perSecond = 1000

    static var duration: Double {
        let minutes = ProcessInfo.processInfo.environment["PHOSRA_GATE_HIT_SOAK_MINUTES"].flatMap(Double.init)
        return minutes.map { $0 * 60 } ?? 80
    }

    @Test func randomNamesUnderABlockedDomainStayWithinEveryBound() throws {
        let fixture = try SyncFixture()
        #expect(try fixture.register().status == 0)
        let gate = try fixture.run([
            "--hit-queue-max", "\(Self.queueMax)", "--hit-history-max", "\(Self.historyMax)",
            "--hit-names-per-minute", "\(Self.namesPerMinute)",
            // Polls every 5 s (the last flag wins): with a report a second, the fake API's
            // limit of 100 requests a minute is not exceeded, so reports flow.
            "--poll-interval", "5s",
        ])
        defer { gate.daemon.stop() }
        try #require(fixture.eventually { gate.log.contains("event=policy_applied") }, "\(gate.log)")
        fixture.api.faultShare = .init(share: 1, faults: [.serverError], seed: 1)

        let duration = Self.duration
        let baselineAt = min(60, duration / 2)
        let start = monotonicSeconds()
        let load = NameLoad(devices: Self.devices, port: gate.port, perSecond: Self.perSecond, until: start + duration)
        load.start()
        var baseline: Int?
        var samples: [(at: Int, rss: Int, queue: Int, history: Int, state: Int)] = []
        var apiRestored = false
        while monotonicSeconds() < start + duration {
            pause(5_000_000_000)
            let elapsed = monotonicSeconds() - start
            if !apiRestored, elapsed >= duration / 3 {
                fixture.api.faultShare = nil
                apiRestored = true
            }
            let rss = try Self.residentBytes(gate.daemon.pid)
            let rows = try Self.rows(fixture.state)
            samples.append((Int(elapsed), rss, rows.queue, rows.history, Self.bytes(under: fixture.state)))
            if baseline == nil, elapsed >= baselineAt { baseline = rss }
        }
        load.stop()
        let sent = load.sent
        print("hit soak: \(Int(duration)) s, \(sent) queries from \(Self.devices.count) devices")
        for sample in samples {
            print(
                "hit soak: t=\(sample.at)s rss=\(sample.rss / 1024) KiB queue=\(sample.queue) "
                    + "history=\(sample.history) state=\(sample.state / 1024) KiB")
        }
        #expect(sent >= Int(Double(Self.perSecond) * duration * 0.9), "the load sent \(sent) queries")

        // Resident memory: within 5 MB of the level after the first minute, to the end.
        let level = try #require(baseline)
        let late = samples.filter { Double($0.at) >= baselineAt }.map(\.rss)
        #expect(
            late.allSatisfy { $0 <= level + 5 * 1024 * 1024 }, "rss after \(Int(baselineAt)) s: \(level), later \(late)"
        )
        // The tables at or under their bounds, at every sample.
        #expect(samples.allSatisfy { $0.queue <= Self.queueMax }, "queue over \(Self.queueMax)")
        #expect(samples.allSatisfy { $0.history <= Self.historyMax }, "history over \(Self.historyMax)")
        // The state directory under docs/sync.md's bound: 300 bytes a row of both bounds,
        // the other tables (1 MiB) and the WAL's 8 MiB.
        let stateBound = 300 * (Self.queueMax + Self.historyMax) + (1 << 20) + (8 << 20)
        #expect(samples.allSatisfy { $0.state <= stateBound }, "state over \(stateBound) bytes")

        // The reports: delivered once the API took them, each within a batch's size; named
        // events no more than the rate lets through, the rest folded with their names; the
        // rows merged while the API refused counted in merged_events.
        #expect(
            fixture.eventually(20) {
                fixture.api.reports.contains { ($0.payload["merged_events"]?.int ?? 0) > 0 }
            })
        let reports = fixture.api.reports.filter { $0.reportType == "blocked_attempt" }
        let events = reports.flatMap { $0.payload["events"]?.array ?? [] }
        #expect(reports.allSatisfy { ($0.payload["events"]?.array ?? []).count <= 500 })
        let named = Set(events.filter { $0["names"] == nil }.compactMap { $0["domain"]?.string })
        let minutes = Int(duration / 60) + 2
        #expect(named.count <= Self.namesPerMinute * minutes, "\(named.count) named events over \(minutes) minutes")
        let folded = events.filter { $0["domain"]?.string == "*.reddit.com" || $0["domain"]?.string == "*" }
        #expect(!folded.isEmpty && folded.allSatisfy { ($0["names"]?.int ?? 0) > 0 })
        let reported = events.reduce(0) { $0 + ($1["count"]?.int ?? 0) }
        let merged = reports.reduce(0) { $0 + ($1.payload["merged_events"]?.int ?? 0) }
        #expect(reported <= sent, "\(reported) blocks reported for \(sent) queries")
        print("hit soak: \(reports.count) reports, \(events.count) events, \(reported) blocks, merged_events \(merged)")

        // What the bounds took, in `status` and on `/metrics` alike.
        gate.daemon.stop()
        let status = try GateCommand.run(["status", "--state-dir", fixture.state])
        let line = status.stdout.split(separator: "\n").first { $0.contains("hits bounded:") }
        #expect(line != nil, "\(status.stdout)")
        print("hit soak: status \(line ?? "")")
    }

    static func residentBytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.filter(\.isNumber)) ?? 0) * 1024
    }

    /// The rows of the queue and the history, read beside `run` as `status` does.
    static func rows(_ state: String) throws -> (queue: Int, history: Int) {
        let store = try Store.openReadOnly(directory: state)
        defer { store.close() }
        return try store.hitRowCounts()
    }

    static func bytes(under directory: String) -> Int {
        let files = FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []
        return files.reduce(0) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + file))?[.size] as? Int
            return total + (size ?? 0)
        }
    }
}

/// Random names under reddit.com over UDP, one thread a device address, paced to
/// `perSecond` in all; the answers are read and dropped. Each thread stops at `until`.
final class NameLoad: @unchecked Sendable {
    let devices: [String]
    let port: UInt16
    let perSecond: Int
    let until: Double
    private let lock = NSLock()
    private var count = 0
    private var stopped = false
    private var threads: [Thread] = []
    private let done = DispatchGroup()

    init(devices: [String], port: UInt16, perSecond: Int, until: Double) {
        self.devices = devices
        self.port = port
        self.perSecond = perSecond
        self.until = until
    }

    var sent: Int { lock.withLock { count } }

    func start() {
        for (index, device) in devices.enumerated() {
            done.enter()
            let thread = Thread { [self] in
                defer { done.leave() }
                run(device, seed: UInt64(index + 1))
            }
            thread.start()
            threads.append(thread)
        }
    }

    func stop() {
        lock.withLock { stopped = true }
        _ = done.wait(timeout: .now() + 10)
    }

    private func run(_ device: String, seed: UInt64) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socket >= 0 else { return }
        defer { close(socket) }
        guard Self.bind(socket, device), Self.connect(socket, port: port) else { return }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        var random = SeededGenerator(seed: seed)
        let share = perSecond / devices.count
        let tick = 0.02
        let perTick = max(1, Int(Double(share) * tick))
        var next = monotonicSeconds()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var id: UInt16 = 0
        while monotonicSeconds() < until, !lock.withLock({ stopped }) {
            for _ in 0..<perTick {
                id &+= 1
                let query = Self.query(id: id, name: "r\(UInt64.random(in: 0...UInt64.max, using: &random)).reddit.com")
                if query.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) > 0 {
                    lock.withLock { count += 1 }
                }
            }
            while buffer.withUnsafeMutableBytes({ recv(socket, $0.baseAddress, $0.count, 0) }) > 0 {}
            next += tick
            let wait = next - monotonicSeconds()
            if wait > 0 { pause(UInt64(wait * 1e9)) }
        }
    }

    /// A query for `name`'s A record, recursion desired (RFC 1035 §4.1).
    static func query(id: UInt16, name: String) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            bytes.append(UInt8(label.utf8.count))
            bytes.append(contentsOf: label.utf8)
        }
        bytes += [0, 0, 1, 0, 1]
        return bytes
    }

    static func bind(_ socket: Int32, _ address: String) -> Bool {
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, address, &local.sin_addr)
        return withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    static func connect(_ socket: Int32, port: UInt16) -> Bool {
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        return withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
