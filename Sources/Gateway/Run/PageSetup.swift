import Config
import DomainMatch
import EventLoop
import Glibc
import Locks
import Neighbours
import ParentPage
import Policy
import Store
import SystemIO
import TLS

/// The parent's page in the daemon (docs/parent-page.md): its listeners on a loop thread of
/// their own, started once a password is set (at start, or within a second of
/// `phosra-gate web-password`), its certificate, and the `Household` it sees the gateway
/// through.
package final class PageSetup: Household, @unchecked Sendable {
    // Sendable: `group`, `server`, `bound` and `failedOnce` change on the control thread
    // only; the page's loop calls `currentEngine` and `parentChanged`, which touch only the
    // daemon's locked parts and the store.
    private weak var daemon: Daemon?
    private let store: Store
    private let log: Logger
    private let clock: any Clock
    private let stateDirectory: String
    private let https: [ListenAddress]
    private let redirect: [ListenAddress]
    /// The child's page (docs/requests-and-notifications.md#the-childs-page).
    private let child: [ListenAddress]
    private let homeName: String
    private let certificate: (cert: String, key: String)?
    private let names: [String]
    private let clients: PageClients
    private let password: WebPassword
    private let leasePath: String
    /// Names of devices by reverse DNS (nil: no server to ask).
    let reverseNames: ReverseNames?
    private var group: EventLoopGroup?
    private var server: WebServer?
    /// Called after each change (the sync thread reports it at once).
    var changed: (@Sendable () -> Void)?
    /// Called after a login or logout (the shared store's thread writes it at once).
    var sessions: (@Sendable () -> Void)?
    /// Called when a child asked, with the question in words (the notification).
    var asked: (@Sendable (RequestRow, String) -> Void)?
    /// The addresses the page listens on, once started.
    private(set) var bound: [SocketAddress] = []

    /// Certificate files the gateway makes when the parent gives none.
    static let certificateFile = "web-cert.pem"
    static let keyFile = "web-key.pem"

    init(
        settings: Settings, daemon: Daemon, store: Store, stateDirectory: String, reverseNames: ReverseNames? = nil,
        log: Logger, clock: any Clock
    ) {
        self.daemon = daemon
        self.reverseNames = reverseNames
        self.store = store
        self.log = log
        self.clock = clock
        self.stateDirectory = stateDirectory
        let hosts = Self.defaultHosts(settings)
        https =
            settings.isSet(Key.webListen)
            ? settings[Key.webListen] : hosts.map { ListenAddress(address: $0, port: Self.defaultPort) }
        redirect =
            settings.isSet(Key.webHTTPListen)
            ? settings[Key.webHTTPListen]
            : https.map { ListenAddress(address: $0.address, port: Self.defaultRedirectPort) }
        child = Self.childListen(settings)
        homeName = settings[Key.homeName].lowercased()
        let files = Self.certificateFiles(settings, stateDirectory: stateDirectory)
        certificate = files.parents ? (files.certificate, files.key) : nil
        names = settings[Key.webNames]
        leasePath = settings[Key.dhcpLeases]
        clients = PageClients(settings[Key.webAllowClients])
        password = WebPassword(stateDirectory: stateDirectory)
    }

    static let defaultPort: UInt16 = 8443
    static let defaultRedirectPort: UInt16 = 8080
    static let defaultChildPort: UInt16 = 80

    /// `child_listen`, else port 80 on the addresses of `lan_interfaces`; none without them
    /// (a gateway on loopback has no child's device to serve).
    package static func childListen(_ settings: Settings) -> [ListenAddress] {
        if settings.isSet(Key.childListen) { return settings[Key.childListen] }
        guard !settings[Key.lanInterfaces].isEmpty else { return [] }
        return defaultHosts(settings).filter { !$0.isLoopback }.map {
            ListenAddress(address: $0, port: defaultChildPort)
        }
    }

    /// The TCP ports the page listens on, HTTPS, redirect and the child's page, as `init`
    /// chooses them: what the firewall opens on the LAN interfaces only.
    package static func ports(_ settings: Settings) -> [UInt16] {
        let https = settings.isSet(Key.webListen) ? settings[Key.webListen].map(\.port) : [defaultPort]
        let redirect =
            settings.isSet(Key.webHTTPListen)
            ? settings[Key.webHTTPListen].map(\.port) : (https.isEmpty ? [] : [defaultRedirectPort])
        return Array(Set(https + redirect + childListen(settings).map(\.port))).sorted()
    }

    /// The page's certificate and key: the parent's (`web_tls_cert` and `web_tls_key`, both
    /// set), else those the gateway makes in the state directory. `status` and `doctor`
    /// read the same files `run` serves.
    package static func certificateFiles(
        _ settings: Settings, stateDirectory: String
    ) -> (certificate: String, key: String, parents: Bool) {
        let cert = settings[Key.webTLSCert]
        let key = settings[Key.webTLSKey]
        if !cert.isEmpty, !key.isEmpty { return (cert, key, true) }
        return (stateDirectory + "/" + certificateFile, stateDirectory + "/" + keyFile, false)
    }

    /// Port 8443's addresses by default: those of `lan_interfaces`, else loopback.
    static func defaultHosts(_ settings: Settings) -> [IPAddress] {
        let interfaces = settings[Key.lanInterfaces].map(\.text)
        // A link-local address needs its interface to bind: left out.
        let addresses = (interfaces.isEmpty ? [] : OwnAddresses.of(interfaces: Set(interfaces))).filter {
            if case .v6(let high, _) = $0 { return high >> 54 != 0x3FA }
            return true
        }
        return addresses.isEmpty ? [.v4(0x7F00_0001)] : addresses.sorted { $0.description < $1.description }
    }

    // MARK: Household

    package func currentEngine() -> DecisionEngine<LabelTrie> {
        guard let daemon else { preconditionFailure("the page outlived its daemon") }
        return daemon.pipeline.snapshot.engine
    }

    package func parentChanged() {
        reloadParent()
        changed?()
    }

    /// The overrides and devices in the store enforced from the next query: after the
    /// page changed them, or the shared store did.
    func reloadParent() {
        guard let daemon else { return }
        do {
            let learns = serving.withLock { $0 }
            daemon.replace(
                parent: try ParentState.load(from: store, now: clock.wall().unixSeconds, learnsDevices: learns))
        } catch {
            log.error("overrides_unreadable", [("error", "\(error)")])
        }
    }

    package func requestAsked(_ request: RequestRow, words: String) {
        asked?(request, words)
    }

    package func requestAnswered(_ request: RequestRow) {
        changed?()
    }

    package func sessionsChanged() {
        sessions?()
    }

    // MARK: Starting

    /// Starts the page when a password is set and it is not running yet (control thread;
    /// called at start and on every watch tick). A failure (a port taken, a certificate
    /// that does not load) is logged once; the page then waits for a restart.
    func startIfReady() {
        guard server == nil, !https.isEmpty, password.current() != nil, !failedOnce else { return }
        do throws(GatewayError) {
            try start()
        } catch {
            failedOnce = true
            log.error("web_not_started", [("error", "\(error)")])
        }
    }

    private var failedOnce = false
    /// Set before the listeners accept (control thread), read by `parentChanged` on the
    /// page's thread as well: while the page serves, every device is learnt by its MAC.
    private let serving = Lock(false)

    /// What the Devices page asks for a device's name by reverse DNS, when a server can be asked.
    private func reverseName() -> (@Sendable (IPAddress) -> String?)? {
        guard let names = reverseNames else { return nil }
        return { names.name(for: $0) }
    }

    private func start() throws(GatewayError) {
        let tls = try loadCertificate()
        let group: EventLoopGroup
        do { group = try EventLoopGroup(loopCount: 1, name: "pg-web", clock: clock) } catch {
            throw .usage("the page's loop: \(error)")
        }
        let loop = group.next()
        // The page loop's own view of the neighbour table, as each DNS loop has its own;
        // its netlink socket opens on first use, on that loop.
        let neighbours = NeighbourCache()
        let clock = self.clock
        let app = WebApp(
            store: store, household: self, password: password, hosts: allowedHosts(), clients: clients,
            deviceMAC: { neighbours.mac(for: $0, now: clock.now()) }, clock: clock, log: log,
            deviceFacts: DeviceFacts(leasePath: leasePath, reverseName: reverseName()))
        var childHosts = allowedHosts()
        childHosts.insert(homeName)
        for listen in child where !listen.address.isUnspecified { childHosts.insert(listen.address.description) }
        // The proxy reaches the child's page at its route's address, from that address (any
        // of the host's behind a wildcard listener).
        var gateway: Set<IPAddress> = [.v4(0x7F00_0001), .v6(high: 0, low: 1)]
        for listen in child {
            if listen.address.isUnspecified {
                gateway.formUnion(OwnAddresses.all())
            } else {
                gateway.insert(listen.address)
            }
        }
        let childApp = ChildApp(
            store: store, household: self, hosts: childHosts, gateway: gateway,
            deviceMAC: { neighbours.mac(for: $0, now: clock.now()) },
            clock: clock, log: log)
        let server = WebServer(
            loop: loop, clock: clock, app: app, child: child.isEmpty ? nil : childApp, tls: tls,
            httpsPort: https[0].port)
        let https = https.map { SocketAddress(listen: $0) }
        let redirect = redirect.map { SocketAddress(listen: $0) }
        let child = child.map { SocketAddress(listen: $0) }
        serving.withLock { $0 = true }
        do {
            bound = try loop.runSync { try server.start(https: https, redirect: redirect, child: child) }
        } catch {
            serving.withLock { $0 = false }
            group.shutdownGracefully()
            throw .usage("web_listen: \(error)")
        }
        self.group = group
        self.server = server
        // From now on every device is learnt by its MAC, for the Devices page.
        parentChanged()
        log.info(
            "listening",
            [
                ("service", "web"), ("tcp", bound.map(\.description).joined(separator: ",")),
                ("sha256", tls.fingerprintSHA256),
            ])
    }

    /// Closes the page (control thread, at stop).
    func stop() {
        guard let group, let server else { return }
        _ = try? group.next().runSync(timeout: 2_000_000_000) { server.stop() }
        group.shutdownGracefully()
        self.group = nil
        self.server = nil
    }

    /// The parent's certificate, or the gateway's own: made at first start (ECDSA P-256,
    /// the host's names and the listen addresses), kept across restarts and upgrades.
    private func loadCertificate() throws(GatewayError) -> TLSServerContext {
        if let certificate {
            do { return try TLSServerContext(certificateFile: certificate.cert, keyFile: certificate.key) } catch {
                throw .usage("web_tls_cert: \(error)")
            }
        }
        let cert = stateDirectory + "/" + Self.certificateFile
        let key = stateDirectory + "/" + Self.keyFile
        if Files.exists(cert), Files.exists(key),
            let loaded = try? TLSServerContext(certificateFile: cert, keyFile: key)
        {
            return loaded
        }
        let hostName = Self.hostName()
        let dnsNames = ([hostName, "localhost"] + names).filter { !$0.isEmpty && IPAddress($0) == nil }
        var addresses = Set(https.map(\.address).filter { !$0.isUnspecified }.map(\.description))
        if https.contains(where: { $0.address.isUnspecified }) {
            addresses.formUnion(OwnAddresses.all().map(\.description))
        }
        do {
            let made = try SelfSignedCertificate.make(
                commonName: hostName.isEmpty ? "phosra-gate" : hostName, dnsNames: Array(Set(dnsNames)).sorted(),
                ipAddresses: addresses.sorted(), validDays: 825, now: clock.wall())
            try SelfSignedCertificate.write(
                certificatePEM: made.certificatePEM, keyPEM: made.keyPEM, certificateFile: cert, keyFile: key)
            log.info("web_certificate_made", [("path", cert)])
            return try TLSServerContext(certificateFile: cert, keyFile: key)
        } catch {
            throw .usage("the page's certificate: \(error)")
        }
    }

    /// Names and addresses a request's `Host` may carry.
    private func allowedHosts() -> Set<String> {
        var hosts: Set<String> = ["localhost"]
        let hostName = Self.hostName()
        if !hostName.isEmpty {
            hosts.insert(hostName)
            hosts.insert(hostName + ".local")
        }
        for name in names { hosts.insert(name.lowercased()) }
        for listen in https {
            if listen.address.isUnspecified {
                for address in OwnAddresses.all() { hosts.insert(address.description) }
            } else {
                hosts.insert(listen.address.description)
            }
        }
        hosts.insert("127.0.0.1")
        hosts.insert("::1")
        return hosts
    }

    /// The host's name in lower case, as certificates and `Host` headers carry it.
    static func hostName() -> String { RunOptions.hostName().lowercased() }
}
