import Foundation

/// A DNS tree of the test's own, served by knotd (package knot) on 127.0.0.1, UDP and TCP:
/// a signed root delegating to a signed `com`, and zones under `com`, signed or not, each
/// delegated with its DS when signed (an unsigned one is proven so by `com`'s NSEC). The
/// keys are made for the test by keymgr (ECDSA P-256, one key per zone) and knotd signs at
/// load, so `trustAnchor` is the root's DS as a validator takes it. knotd answers every
/// zone with authority (AA=1, RA=0) and a DS query from the parent's zone.
public final class SignedZones: @unchecked Sendable {
    // Sendable: immutable after init; the server process guards its own state.
    public static let knotd = "/usr/sbin/knotd"
    public static let keymgr = "/usr/sbin/keymgr"

    /// Whether knotd and keymgr are installed (`scripts/install-deps --test` installs them).
    public static let available =
        FileManager.default.isExecutableFile(atPath: knotd) && FileManager.default.isExecutableFile(atPath: keymgr)

    /// A zone below `com`: its name (`google.com`), whether it is signed, and its records
    /// in master-file form (`www.google.com. A 198.51.100.1`), besides the SOA, NS and glue
    /// made here.
    public struct Zone: Sendable {
        public let name: String
        public let signed: Bool
        public let records: [String]

        public init(_ name: String, signed: Bool, records: [String]) {
            self.name = name
            self.signed = signed
            self.records = records
        }
    }

    public let port: UInt16
    public let server: SpawnedServer
    /// The root's DS records (`. DS 12345 13 2 …`), each a line of unbound's `trust-anchor`.
    public let trustAnchor: [String]
    private let directory: ScratchDirectory

    /// `127.0.0.1:PORT`, as `--upstream` takes it.
    public var spec: String { "127.0.0.1:\(port)" }

    /// - Parameters:
    ///   - com: records of the signed `com` zone itself.
    ///   - zones: the zones delegated from `com`.
    public init(com: [String], zones: [Zone]) throws {
        directory = try ScratchDirectory("pg-knot")
        let directory = self.directory
        let signed = [".", "com."] + zones.filter(\.signed).map { $0.name + "." }
        let all = [".", "com."] + zones.map { $0.name + "." }
        let configuration = { (port: UInt16?) in
            Self.configuration(directory: directory, port: port, zones: all, signed: signed)
        }
        try FileManager.default.createDirectory(atPath: directory.path("db"), withIntermediateDirectories: true)
        // keymgr reads the zones and the policy; the port is found later, for knotd.
        let keysConfig = try directory.write("keys.conf", configuration(nil))
        var delegationSigners: [String: [String]] = [:]
        for zone in signed {
            try Self.keymgr(
                keysConfig, zone, "generate", "algorithm=ecdsap256sha256", "ksk=yes", "zsk=yes", in: directory)
            delegationSigners[zone] = try Self.keymgr(keysConfig, zone, "ds", in: directory)
                .split(separator: "\n").map(String.init).filter { $0.contains(" DS ") }
        }
        trustAnchor = delegationSigners["."] ?? []
        guard !trustAnchor.isEmpty else { throw SpawnedServerError(message: "keymgr gave no DS for the root") }
        func head(_ zone: String) -> [String] {
            let host = zone == "." ? "ns." : "ns.\(zone)"
            return [
                "$TTL 3600", "\(zone) SOA \(host) hostmaster.\(zone == "." ? "" : zone) 1 3600 600 86400 300",
                "\(zone) NS \(host)", "\(host) A 127.0.0.1",
            ]
        }
        func delegation(_ zone: String) -> [String] {
            ["\(zone) NS ns.\(zone)", "ns.\(zone) A 127.0.0.1"] + (delegationSigners[zone] ?? [])
        }
        try directory.write("zones/root.zone", (head(".") + delegation("com.")).joined(separator: "\n") + "\n")
        let children = zones.flatMap { delegation($0.name + ".") }
        try directory.write("zones/com.zone", (head("com.") + com + children).joined(separator: "\n") + "\n")
        for zone in zones {
            try directory.write(
                "zones/\(zone.name).zone", (head(zone.name + ".") + zone.records).joined(separator: "\n") + "\n")
        }
        (server, port) = try SpawnedServer.onFreePort { port in
            let file = try directory.write("knot-\(port).conf", configuration(port))
            return try SpawnedServer(
                Self.knotd, ["-c", file], logFile: directory.path("knot-\(port).log"), readyPort: port)
        }
        // knotd accepts before its zones are loaded and signed: each logs when it is served.
        let server = self.server
        guard
            waitUntil(
                timeout: .seconds(20), interval: 5_000_000,
                {
                    all.allSatisfy { server.log.contains("[\($0)] loaded") }
                })
        else {
            server.kill()
            throw SpawnedServerError(message: "knotd did not load every zone:\n\(server.log)")
        }
    }

    deinit { server.kill() }

    public var log: String { server.log }

    /// One knotd: one worker of each kind, small databases, every zone from `zones/`;
    /// listening on 127.0.0.1:`port` when given.
    private static func configuration(
        directory: ScratchDirectory, port: UInt16?, zones: [String], signed: [String]
    )
        -> String
    {
        var text = """
            server:
            \(port.map { "    listen: 127.0.0.1@\($0)" } ?? "")
                rundir: \(directory.path)
                udp-workers: 1
                tcp-workers: 1
                background-workers: 1
            database:
                storage: \(directory.path("db"))
                journal-db-max-size: 64M
                kasp-db-max-size: 16M
                timer-db-max-size: 16M
            log:
              - target: stderr
                any: info
            policy:
              - id: test
                manual: on
                algorithm: ecdsap256sha256
            template:
              - id: default
                storage: \(directory.path("zones"))
                zonefile-sync: -1
                journal-content: none
            zone:

            """
        for zone in zones {
            let file = zone == "." ? "root.zone" : "\(zone.dropLast()).zone"
            text += "  - domain: \(zone)\n    file: \(file)\n"
            if signed.contains(zone) { text += "    dnssec-signing: on\n    dnssec-policy: test\n" }
        }
        return text
    }

    /// keymgr's output for `zone`, or an error with it when it fails.
    @discardableResult
    private static func keymgr(
        _ config: String, _ zone: String, _ words: String..., in directory: ScratchDirectory
    )
        throws -> String
    {
        let (status, output) = try SpawnedServer.run(
            [keymgr, "-c", config, zone] + words, logFile: directory.path("keymgr.log"))
        guard status == 0 else {
            throw SpawnedServerError(message: "keymgr \(zone) \(words.joined(separator: " ")) failed: \(output)")
        }
        return output
    }
}
