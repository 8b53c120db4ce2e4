import Foundation

/// A real PostgreSQL server (Debian's `postgresql`) of the test's own: a fresh cluster made
/// with `initdb` in a scratch directory, run by `pg_ctl` as the `postgres` user on a
/// loopback port (and a socket in its own directory), with password authentication for
/// `phosra`. `stop()` and `start()` take it away and bring it back on the same port and
/// data; the cluster goes with the value. Given a network namespace it runs there, on
/// `address`, as the database machine of a LAN the test made.
public final class PostgresServer: @unchecked Sendable {
    // Sendable: the test thread alone calls stop and start.
    public let port: UInt16
    public let user = "phosra"
    public let password = "pg-test-s3cret"
    /// The data directory.
    public let data: String
    /// The address it listens on (and loopback, inside its namespace).
    public let address: String
    private let scratch: ScratchDirectory
    private let bin: String
    /// `ip netns exec NAMESPACE`, or nothing on the host.
    private let inNamespace: [String]

    /// Whether the server's programs are installed.
    public static var isInstalled: Bool { binDirectory() != nil }

    static func binDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    /// `postgresql://phosra@ADDRESS:PORT/postgres`, without the password.
    public var url: String { "postgresql://\(user)@\(address):\(port)/postgres?sslmode=disable" }

    /// A cluster on the host's loopback, or in `namespace` (of `net`) on `address`.
    public init(in namespace: (net: NetworkNamespaces, name: String)? = nil, address: String = "127.0.0.1") throws {
        guard let bin = Self.binDirectory() else { throw PostgresError("PostgreSQL is not installed (postgresql)") }
        self.bin = bin
        self.address = address
        if let namespace {
            let ip = try namespace.net.exec(in: namespace.name, [])
            inNamespace = [ip.path] + ip.arguments
        } else {
            inNamespace = []
        }
        scratch = try ScratchDirectory("pg-postgres")
        // The server runs as `postgres`: it must reach and own its directory.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.path)
        data = scratch.path("data")
        let passwordFile = try scratch.write("pwfile", password + "\n")
        try FileManager.default.createDirectory(
            atPath: data, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for path in [data, passwordFile] {
            let owned = try Program.run("/bin/chown", ["postgres", path])
            guard owned.status == 0 else { throw PostgresError("chown \(path): \(owned.stderr)") }
        }
        let made = try Self.asPostgres(
            "\(bin)/initdb",
            ["-D", data, "-U", user, "--pwfile", passwordFile, "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"])
        guard made.status == 0 else { throw PostgresError("initdb: \(made.stderr)") }
        if address != "127.0.0.1" {
            // initdb lets in loopback only; the LAN's gateways come from its subnet.
            let rules = try FileHandle(forWritingTo: URL(fileURLWithPath: data + "/pg_hba.conf"))
            try rules.seekToEnd()
            try rules.write(contentsOf: Data("host all all samenet scram-sha-256\n".utf8))
            try rules.close()
        }
        port = FreePort.tcpAndUDP()
        try start()
    }

    deinit { stop(fast: true) }

    /// Starts the server on its port and waits until it takes connections.
    public func start() throws {
        let listen = Set(["127.0.0.1", address]).sorted().joined(separator: ",")
        let options =
            "-p \(port) -c listen_addresses=\(listen) -c unix_socket_directories=\(data) -c fsync=off "
            + "-c max_files_per_process=10000"
        // Through a shell spawned with no descriptor of the test process's but its output
        // (SpawnedServer.run, which waits for exactly its child): the server `pg_ctl` leaves
        // running must hold no pipe or socket of the suite's, or a reader of that pipe
        // would wait for the server to end. The limit of files is raised, and the user
        // changed by setpriv, which (unlike runuser's PAM session) keeps it. The paths are
        // the test's own (no spaces, no quotes).
        let command =
            "ulimit -n $(ulimit -Hn); \(inNamespace.joined(separator: " ")) setpriv --reuid=postgres --regid=postgres --init-groups \(bin)/pg_ctl -D \(data) -w -t 30 "
            + "-l \(data)/server.log -o '\(options)' start"
        let (status, output) = try SpawnedServer.run(["/bin/sh", "-c", command], logFile: scratch.path("pg_ctl.out"))
        guard status == 0 else {
            let log = (try? String(contentsOfFile: data + "/server.log", encoding: .utf8)) ?? ""
            throw PostgresError("pg_ctl start failed (\(status)): \(output)\n\(log)")
        }
    }

    /// Stops the server (`fast`: without waiting for clients to go).
    public func stop(fast: Bool = true) {
        _ = try? SpawnedServer.run(
            [
                "/usr/sbin/runuser", "-u", "postgres", "--", "\(bin)/pg_ctl", "-D", data, "-w", "-m",
                fast ? "fast" : "smart", "stop",
            ],
            logFile: scratch.path("pg_ctl.out"))
    }

    /// A file holding the password, for `shared_store_password_file`.
    public func passwordFile() throws -> String { try scratch.write("client-password", password + "\n") }

    /// Runs `sql` with `psql` as `phosra` and returns its rows, each as its columns' text.
    public func rows(_ sql: String) throws -> [[String]] {
        let words =
            inNamespace + [
                "/usr/bin/env", "PGPASSWORD=\(password)", "\(bin)/psql", "-h", address, "-p", "\(port)", "-U", user,
                "-d",
                "postgres",
                "-AtX", "-v", "ON_ERROR_STOP=1", "-c", sql,
            ]
        let result = try Program.run(words[0], Array(words.dropFirst()))
        guard result.status == 0 else { throw PostgresError("psql: \(result.stderr)") }
        return result.stdout.split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    static func asPostgres(_ program: String, _ arguments: [String]) throws -> ProgramOutput {
        try Program.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
    }
}

public struct PostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
