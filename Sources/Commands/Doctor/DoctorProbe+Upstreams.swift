import Blocklists
import DNSUpstream
import DNSWire
import EventLoop
import Firewall
import Gateway
import Glibc
import SystemIO
import TLS

extension DoctorProbe {
    /// The question each upstream is asked: the name every resolver has cached (what
    /// dnsdist asks in its health checks too).
    static let upstreamQuestion = DNSQuestion(name: try! DNSName("a.root-servers.net."), type: .a)

    /// Asks each upstream once, all at the same time, through the gateway's own upstream
    /// client (UDP, TCP or DNS-over-TLS as configured), on an event loop of its own.
    static func upstreams(
        _ upstreams: [UpstreamSpec], tls: TLSContext?, timeout: Nanoseconds, clock: any Clock
    ) -> [DoctorVerdict.Probe] {
        guard !upstreams.isEmpty else { return [] }
        let loop: EventLoop
        let client: UpstreamClient
        do {
            loop = try EventLoop(clock: clock)
            client = try UpstreamClient(
                loop: loop, upstreams: upstreams, timeout: timeout, totalBudget: timeout, tls: tls)
        } catch {
            return upstreams.map { _ in .failed("\(error)") }
        }
        let results = UpstreamResults(count: upstreams.count)
        client.onEvent = { event in
            if case .failed(let upstream, let error) = event { results.reasons[upstream] = "\(error)" }
        }
        _ = loop.execute {
            for (index, upstream) in upstreams.enumerated() {
                client.resolve(upstreamQuestion, dnssecOK: false, checkingDisabled: false, upstreams: [upstream]) {
                    reply in
                    results.outcomes[index] =
                        reply != nil ? .answered : .failed(results.reasons[upstream] ?? "no answer")
                    if !results.outcomes.contains(nil) {
                        client.shutdown()
                        loop.stop()
                    }
                }
            }
        }
        loop.run()
        return results.outcomes.map { $0 ?? .failed("no answer") }
    }

    /// Filled on the probe's loop thread only, read after the loop returned.
    private final class UpstreamResults: @unchecked Sendable {
        var outcomes: [DoctorVerdict.Probe?]
        var reasons: [UpstreamSpec: String] = [:]
        init(count: Int) { outcomes = Array(repeating: nil, count: count) }
    }

    // MARK: The firewall

    /// `nft list table inet phosra_gate`.
    static func firewallTable() -> DoctorVerdict.Listing {
        guard let nft = Nftables.candidates.first(where: { access($0, X_OK) == 0 }) else {
            return .unavailable("nft not found (\(Nftables.candidates.joined(separator: ", ")))")
        }
        let result: ChildProcess.Result
        do { result = try ChildProcess.run(nft, ["list", "table", Ruleset.family, Ruleset.table], input: []) } catch {
            return .unavailable("\(error)")
        }
        return listing(status: result.status, output: result.text)
    }

    /// What nft's exit status and words mean.
    static func listing(status: Int32, output: String) -> DoctorVerdict.Listing {
        if status == 0 { return .table(output) }
        if output.contains("No such file or directory") { return .missing }
        if output.contains("Operation not permitted") {
            return .denied("nft may not read the tables (Operation not permitted)")
        }
        let said = output.split(separator: "\n").first.map(String.init) ?? "no output"
        return .unavailable("nft list table failed (exit status \(status)): \(said)")
    }

    // MARK: The lists

    /// The most recently written `*.txt` list file under the category folders of `folders`
    /// (folders that do not exist are passed over).
    static func newestList(in folders: [String]) -> (path: String, modified: Int64)? {
        var newest: (path: String, modified: Int64)?
        for folder in folders where Files.isDirectory(folder) {
            guard let inputs = try? ListInputs.scan(folder) else { continue }
            for file in inputs.files {
                let seconds = file.modified / 1_000_000_000
                if newest == nil || seconds > newest!.modified { newest = (file.path, seconds) }
            }
        }
        return newest
    }
}
