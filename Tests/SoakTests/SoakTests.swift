import Foundation
import Store
import TestSupport
import Testing

/// The whole daemon under mixed load for `PHOSRA_GATE_SOAK_MINUTES` (docs/benchmarks.md#soak):
/// DNS over UDP and TCP, CONNECT and plain HTTP, malformed input and idle connections from
/// two devices; the local policy swapped by rename, `SIGHUP` and `SIGUSR1`, a new API policy
/// now and then, and an API that fails a tenth of the calls. Fails on memory growth after
/// warm-up, a peak over the README's bound, open files or threads that do not come back,
/// a wrong or missing answer, or a hit neither delivered nor queued. `scripts/soak` runs it.
@Suite struct SoakTests {
    @Test(.enabled(if: SoakSettings.isRequested, "scripts/soak sets \(SoakSettings.environmentKey)"))
    func theDaemonUnderMixedLoad() throws {
        let settings = try SoakSettings.fromEnvironment()
        HostileConnections.raiseOpenFileLimit()
        let home = try SoakGateway(settings)
        let gate = try home.start()
        defer { gate.daemon.stop() }
        report(
            "\(settings.binary), \(Int(settings.duration)) s of load, warm-up \(Int(settings.warmUp)) s, "
                + "sample every \(Int(SoakSettings.sampleInterval)) s, seed \(settings.seed) (PHOSRA_GATE_SOAK_SEED)")
        home.api.faultShare = .init(
            share: 0.1, faults: [.serverError, .panic, .dropBeforeProcessing, .dropAfterProcessing, .keyLookupFails],
            seed: settings.seed)

        let ledger = SoakLedger()
        let timeline = PolicyTimeline()
        let start = monotonicSeconds()
        let sampler = Sampler(pid: home.pid, ledger: ledger, start: start)
        sampler.run()
        let control = Self.startLoad(home, ledger, timeline, seed: settings.seed)

        var died = !Self.wait(until: start + settings.warmUp, while: gate)
        control.pause()
        sampler.phase = .quiet
        let quietStart = try Self.settled(sampler)
        report("quiet after warm-up: " + quietStart.line)
        sampler.phase = .load
        control.resume()
        died = died || !Self.wait(until: start + settings.duration, while: gate)
        control.stop()
        sampler.phase = .drain
        let quietEnd = try Self.settled(sampler)
        report("quiet at the end: " + quietEnd.line)
        sampler.stop()
        let faults = home.api.faultShare
        home.api.faultShare = nil
        report("the API failed \(faults?.drawn.count ?? 0) of \(faults?.requests ?? 0) device requests")
        try #require(!died, "run died during the soak:\n\(gate.log.suffix(4000))")

        Self.flushHits(home)
        gate.daemon.signal(SIGTERM)
        let exitStatus = gate.daemon.waitForExit(timeout: 20)
        let hits = try HitAccount.take(home)
        let verdict = SoakVerdict(
            settings: settings, samples: sampler.samples, quietStart: quietStart, quietEnd: quietEnd, ledger: ledger,
            hits: hits, exitStatus: exitStatus)
        for fact in verdict.facts { report(fact) }
        for example in ledger.examples { report("  " + example) }
        for failure in verdict.failures { report("FAIL: " + failure) }
        report(verdict.failures.isEmpty ? "PASS" : "FAIL (\(verdict.failures.count))")
        #expect(verdict.failures.isEmpty, "\(verdict.failures.joined(separator: "\n"))\n\(gate.log.suffix(3000))")
    }

    /// Every load loop, each on its own thread (docs/benchmarks.md#soak lists the rates).
    static func startLoad(
        _ home: SoakGateway, _ ledger: SoakLedger, _ timeline: PolicyTimeline, seed: UInt64
    )
        -> LoadControl
    {
        let control = LoadControl()
        for (index, client) in [SoakNames.localClient, SoakNames.syncedClient].enumerated() {
            let udp = UDPLoad(
                client: client, port: home.dnsPort, ledger: ledger, timeline: timeline, seed: seed &+ UInt64(index))
            control.spawn("udp \(client)", every: 0.02, quiesce: udp.quiesce, step: udp.step)
            let proxy = ProxyLoad(
                port: home.proxyPort, originPort: home.origin.port, ledger: ledger, seed: seed &+ 10 &+ UInt64(index))
            control.spawn("proxy \(index)", every: 0.05, quiesce: proxy.quiesce, step: proxy.step)
        }
        let tcp = TCPLoad(port: home.dnsPort, ledger: ledger, timeline: timeline, seed: seed &+ 20)
        control.spawn("tcp", every: 0.05, quiesce: tcp.quiesce, step: tcp.step)
        let real = RealClients(home: home, ledger: ledger, timeline: timeline, seed: seed &+ 30)
        control.spawn("dig/curl", every: 1, step: real.step)
        let churn = Churn(home: home, timeline: timeline, ledger: ledger)
        control.spawn("churn", every: Churn.tick, step: churn.step)
        return control
    }

    /// Sleeps until `deadline`; false as soon as the daemon is gone.
    static func wait(until deadline: Double, while gate: GateRun) -> Bool {
        while monotonicSeconds() < deadline {
            guard gate.daemon.isRunning else { return false }
            usleep(250_000)
        }
        return gate.daemon.isRunning
    }

    /// A sample once the open files have held still for 2 s (connections the load closed
    /// are closed by the daemon a moment later), at most 20 s after the load paused.
    static func settled(_ sampler: Sampler) throws -> ProcSample {
        var readings: [ProcSample] = []
        let deadline = monotonicSeconds() + 20
        while monotonicSeconds() < deadline {
            if let sample = sampler.take() { readings.append(sample) }
            if readings.count >= 5, Set(readings.suffix(5).map(\.openFiles)).count == 1 { break }
            usleep(500_000)
        }
        return try #require(readings.last, "no sample of the daemon")
    }

    /// With the API answering again: `SIGUSR1` until the synced profile's queue is empty,
    /// for at most 30 s (what stays queued is counted from the store instead).
    static func flushHits(_ home: SoakGateway) {
        let deadline = monotonicSeconds() + 30
        while monotonicSeconds() < deadline {
            home.gate.daemon.signal(SIGUSR1)
            // The in-memory counts reach the store at least every 5 s, then the reporter sends them.
            usleep(3_000_000)
            guard let store = try? Store.openReadOnly(directory: home.state) else { continue }
            let counts = try? store.queueCounts(profile: "synced")
            store.close()
            if let counts, counts.queued + counts.batched == 0 { break }
        }
    }
}
