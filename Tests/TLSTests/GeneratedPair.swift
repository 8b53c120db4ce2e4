import EventLoop
import SystemIO
import TLS
import TestSupport

/// A fresh self-signed pair from `SelfSignedCertificate`, written to a scratch directory:
/// for `gate.test`, 127.0.0.1 and ::1, valid for 30 days from `now`. Removed with its
/// directory when released.
struct GeneratedPair {
    static let name = "gate.test"
    static let addresses = ["127.0.0.1", "::1"]
    let directory: ScratchDirectory
    let certificatePEM: [UInt8]
    var certificateFile: String { directory.path("gate.pem") }
    var keyFile: String { directory.path("gate.key") }

    init(dnsNames: [String] = [name], now: WallTime = SystemClock().wall()) throws {
        directory = try ScratchDirectory("pg-self-signed")
        let pair = try SelfSignedCertificate.make(
            commonName: "Phosra Gate test", dnsNames: dnsNames, ipAddresses: Self.addresses, validDays: 30, now: now)
        certificatePEM = pair.certificatePEM
        try SelfSignedCertificate.write(
            certificatePEM: pair.certificatePEM, keyPEM: pair.keyPEM, certificateFile: directory.path("gate.pem"),
            keyFile: directory.path("gate.key"))
    }

    func serverContext() throws -> TLSServerContext {
        try TLSServerContext(certificateFile: certificateFile, keyFile: keyFile)
    }

    /// A client that trusts this certificate alone (it is its own CA file).
    func client(serverName: String = name) throws -> TLSConnection {
        try TLSConnection(context: try TLSContext(caFile: certificateFile), serverName: serverName)
    }
}

/// Two `TLSConnection`s joined in memory: whatever ciphertext one has waiting, the other
/// receives.
struct MemoryLink {
    let client: TLSConnection
    let server: TLSConnection

    /// Moves all waiting ciphertext both ways.
    func shuttle() {
        client.takeCiphertext().withUnsafeBytes { _ = server.receiveCiphertext($0) }
        server.takeCiphertext().withUnsafeBytes { _ = client.receiveCiphertext($0) }
    }

    /// Steps both handshakes, shuttling between steps, until both are complete; a
    /// failure on either side throws. A full handshake needs two or three rounds.
    func handshake(rounds: Int = 6) throws(TLSError) -> Bool {
        for _ in 0..<rounds {
            let clientStep = try client.handshake()
            shuttle()
            let serverStep = try server.handshake()
            shuttle()
            if clientStep == .processed(0), serverStep == .processed(0) { return true }
        }
        return false
    }

    /// Sends `bytes` from one side and returns what the other reads of them, shuttling
    /// as often as the pair's buffers need (a message larger than one record).
    func send(_ bytes: [UInt8], from sender: TLSConnection, to receiver: TLSConnection) throws -> [UInt8] {
        var offset = 0
        var received = ByteBuffer()
        while received.readableBytes < bytes.count {
            if offset < bytes.count {
                let step = try bytes[offset...].withUnsafeBytes { try sender.write($0) }
                if case .processed(let count) = step { offset += count }
            }
            shuttle()
            while case .processed(let count) = try receiver.read(into: &received), count > 0 {}
        }
        return received.readBytes(length: received.readableBytes) ?? []
    }
}
