import Config
import DNSProxy
import DNSUpstream
import DomainMatch
import EventLoop
import Glibc
import HTTPProxy
import Policy
import ProxyCore
import SystemIO

/// `run`'s settings, typed. The configuration keys were checked for form when read; what
/// needs more than one key (upstreams from resolv.conf minus our own addresses) is
/// settled here, with errors naming the key.
package struct RunOptions {
    package var dnsListen: [ListenAddress]
    package var stateDirectory: String
    package var upstreams: [UpstreamSpec]
    package var upstreamTimeout: Int64
    package var caFile: String?
    var blockMode: BlockMode
    var blockTTL: UInt32
    var tcpIdle: Int64
    /// `tcp_read_timeout` in milliseconds; `tcp_max_per_client` and `tcp_max`.
    var tcpReadTimeout: Int64
    var tcpMaxPerClient: Int
    var tcpMax: Int
    var cacheSize: Int
    var cacheMinTTL: UInt32, cacheMaxTTL: UInt32
    var serveStaleMax: Int64
    var rateLimit: Int
    var allowClients: AccessList
    var localForward: [LocalForward]
    /// `rebind_allow` with the `local_forward` zones (docs/dns.md#what-answers-may-carry).
    var rebindAllow: DomainSuffixes
    /// `home_name` and the addresses of the child's page it answers with; nil when the
    /// child's page does not listen (docs/requests-and-notifications.md#the-childs-page).
    var home: (name: DomainName, addresses: [IPAddress])?
    package var logFormat: Logger.Format
    /// Loop threads serving DNS: the first `threads` of the daemon's loops.
    var threads: Int
    /// Loop threads taking proxy connections: the first `proxyThreads` loops.
    var proxyThreads: Int
    /// The HTTP proxy (docs/proxy.md): where it listens (empty: no proxy) and its reloadable keys.
    package var proxyListen: [ListenAddress]
    /// Where connections the firewall redirects arrive (docs/network.md#transparent-mode).
    package var transparentListen: [ListenAddress]
    var proxy: ProxySettings
    /// `lan_interfaces`: when set, DNS, the proxy and the transparent listener serve only
    /// what arrives on them and on loopback (docs/network.md#who-is-served).
    var lanInterfaces: [String]
    /// Profiles whose `proxy_password` is written in clear (a warning at start).
    var plainPasswordProfiles: [String] = []

    /// Without a configuration file (running from a checkout), DNS listens on
    /// 127.0.0.1:5300 (not 5353, which mDNS owns) and state lives in ./.phosra-gate.
    package static let checkoutListen = [ListenAddress("127.0.0.1:5300")!]
    /// …and the HTTP proxy on 127.0.0.1:3128 (docs/configuration.md); with a configuration file,
    /// `proxy_listen` decides (empty by default: no proxy).
    static let checkoutProxyListen = [ListenAddress("127.0.0.1:3128")!]
    package static let checkoutStateDirectory = ".phosra-gate"

    package init(_ settings: Settings, fromCheckout: Bool) throws(GatewayError) {
        dnsListen = !settings.isSet(Key.dnsListen) && fromCheckout ? Self.checkoutListen : settings[Key.dnsListen]
        stateDirectory =
            !settings.isSet(Key.stateDir) && fromCheckout
            ? Self.checkoutStateDirectory
            : settings[Key.stateDir]
        let configured = settings[Key.upstream]
        upstreams = configured.isEmpty ? ResolvConf.upstreams(excluding: dnsListen) : configured
        guard !upstreams.isEmpty else {
            throw .config(
                settings.error(Key.upstream, "none given, and /etc/resolv.conf has no nameserver but our own addresses")
            )
        }
        upstreamTimeout = settings[Key.upstreamTimeout].wholeMilliseconds
        caFile = settings[Key.caFile].isEmpty ? nil : settings[Key.caFile]
        if let caFile, !Files.exists(caFile) {
            throw .config(settings.error(Key.caFile, "\(caFile): No such file or directory"))
        }
        blockMode = settings[Key.blockMode]
        blockTTL = UInt32(clamping: settings[Key.blockTTL].components.seconds)
        tcpIdle = settings[Key.tcpIdle].wholeMilliseconds
        tcpReadTimeout = settings[Key.tcpReadTimeout].wholeMilliseconds
        tcpMaxPerClient = settings[Key.tcpMaxPerClient]
        tcpMax = settings[Key.tcpMax]
        cacheSize = settings[Key.cacheSize]
        cacheMinTTL = UInt32(clamping: settings[Key.cacheMinTTL].components.seconds)
        cacheMaxTTL = UInt32(clamping: settings[Key.cacheMaxTTL].components.seconds)
        serveStaleMax = settings[Key.serveStaleMax].wholeMilliseconds
        rateLimit = settings[Key.rateLimit]
        let ranges = settings[Key.allowClients]
        allowClients = ranges.isEmpty ? .defaultClients(ownPrefixes: OwnPrefixes.globalIPv6()) : AccessList(ranges)
        localForward = settings[Key.localForward]
        rebindAllow = DomainSuffixes(settings[Key.rebindAllow] + localForward.map(\.zone))
        let child = PageSetup.childListen(settings)
        guard let name = try? QueryName.parse(settings[Key.homeName]), name.labelCount >= 2 else {
            throw .config(settings.error(Key.homeName, "\"\(settings[Key.homeName])\" is not a host name"))
        }
        if !child.isEmpty {
            var addresses = child.map(\.address).filter { !$0.isUnspecified }
            if addresses.count < child.count { addresses += PageSetup.defaultHosts(settings) }
            home = (name, Array(Set(addresses)).sorted { $0.description < $1.description })
        }
        logFormat = settings[Key.logFormat]
        // Half the cores by default: the kernel's network processing, the HTTP proxy and
        // the sync need the rest (measured: on 2 cores one loop answers ~15 % more than two).
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        threads = Self.loopThreads(settings[Key.dnsThreads], byDefault: cores / 2)
        // Every core by default: a tunnel's set-up is mostly the kernel's work on behalf of
        // the thread that asks, and one loop on two cores was the bottleneck of tunnel
        // set-up while a second core sat partly idle (docs/performance.md#proxy-threads).
        proxyThreads = Self.loopThreads(settings[Key.proxyThreads], byDefault: cores)
        proxyListen =
            !settings.isSet(Key.proxyListen) && fromCheckout
            ? Self.checkoutProxyListen
            : settings[Key.proxyListen]
        transparentListen = settings[Key.transparentListen]
        lanInterfaces = settings[Key.lanInterfaces].map(\.text)
        let gatewayName = settings[Key.gatewayName]
        proxy = ProxySettings(
            connectPorts: Set(settings[Key.connectPorts]),
            allowIPConnect: settings[Key.allowIPConnect],
            connectTimeout: settings[Key.connectTimeout].wholeNanoseconds,
            tunnelIdle: settings[Key.tunnelIdle].wholeNanoseconds,
            maxConnectionsPerClient: settings[Key.proxyMaxConnsPerClient],
            gatewayName: gatewayName.isEmpty ? Self.hostName() : gatewayName)
        proxy.authMode = settings[Key.proxyAuth]
        proxy.maxConnections = settings[Key.proxyMaxConns]
        proxy.stallTimeout = settings[Key.stallTimeout].wholeNanoseconds
        proxy.httpPorts = Set(settings[Key.httpPorts])
        proxy.allowLocalDestinations = settings[Key.allowLocalDestinations]
        proxy.transparentDestination = settings[Key.transparentDestination]
        proxy.ownAddresses = OwnAddresses.all()
        proxy.rebindAllow = rebindAllow
        if let home, let port = child.first?.port {
            proxy.childPage = "http://\(home.name)" + (port == 80 ? "" : ":\(port)")
            let served = child.first { !$0.address.isUnspecified }?.address ?? home.addresses.first
            if let served { proxy.childPageRoute = ChildPageRoute(host: home.name, port: port, address: served) }
        }
        let accounts = try ProxyAccounts.logins(settings)
        proxy.logins = accounts.logins
        plainPasswordProfiles = accounts.plain
        guard !dnsListen.isEmpty else { throw .config(settings.error(Key.dnsListen, "no address to listen on")) }
        guard proxy.connectTimeout > 0 else { throw .config(settings.error(Key.connectTimeout, "must be above 0")) }
        guard proxy.tunnelIdle > 0 else { throw .config(settings.error(Key.tunnelIdle, "must be above 0")) }
        guard proxy.stallTimeout > 0 else { throw .config(settings.error(Key.stallTimeout, "must be above 0")) }
        guard tcpReadTimeout > 0 else { throw .config(settings.error(Key.tcpReadTimeout, "must be above 0")) }
        for (key, value) in [(Key.tcpMax, tcpMax), (Key.tcpMaxPerClient, tcpMaxPerClient)] where value < 0 {
            throw .config(settings.error(key, "must be 0 (no limit) or more"))
        }
        for (key, value) in [
            (Key.proxyMaxConns, proxy.maxConnections), (Key.proxyMaxConnsPerClient, proxy.maxConnectionsPerClient),
        ] where value < 0 {
            throw .config(settings.error(key, "must be 0 (no limit) or more"))
        }
        guard cacheMinTTL <= cacheMaxTTL else {
            throw .config(settings.error(Key.cacheMinTTL, "is above cache_max_ttl"))
        }
    }
}

extension RunOptions {
    /// DNS over TCP: a client at its cap loses its own oldest idle connection, as everyone
    /// does at the total cap (docs/dns.md#dns-over-tcp).
    var tcpCapLimits: ConnectionCaps<IPAddress>.Limits {
        .init(perClient: tcpMaxPerClient, total: tcpMax, shedAtClientCap: true)
    }

    /// The block page's gateway name when `gateway_name` is empty.
    package static func hostName() -> String {
        var name = [UInt8](repeating: 0, count: 256)
        let status = name.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, $0.count - 1) }
        }
        let text = String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
        return status != 0 || text.isEmpty ? "phosra-gate" : text
    }
}

/// The global IPv6 prefixes (/64) of this host's interfaces, which `allow_clients`
/// includes by default (docs/dns.md#who-is-answered).
/// The gateway's own addresses, every interface's (IPv4 and IPv6): the proxy refuses them
/// as destinations (docs/proxy.md#local-destinations).
package enum OwnAddresses {
    static func all() -> Set<IPAddress> { Set(of(interfaces: nil)) }

    /// The addresses of the interfaces named (nil: every interface), in the kernel's order.
    static func of(interfaces: Set<String>?) -> [IPAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            if let interfaces, !interfaces.contains(String(cString: entry.pointee.ifa_name)) { continue }
            let found: IPAddress
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                let bits = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                found = .v4(UInt32(bigEndian: bits))
            case AF_INET6:
                let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
                found = IPAddress(v6Bytes: bytes)
            default: continue
            }
            if !addresses.contains(found) { addresses.append(found) }
        }
        return addresses
    }
}

package enum OwnPrefixes {
    static func globalIPv6() -> [AddressRange] {
        OwnAddresses.of(interfaces: nil).compactMap { address in
            // Global unicast is 2000::/3.
            guard case .v6(let high, _) = address, high >> 61 == 1 else { return nil }
            return AddressRange(address: address, prefixLength: 64)
        }
    }
}

extension RunOptions {
    /// A configured number of loop threads (at most 64), or for 0 `byDefault` (1 to 8).
    static func loopThreads(_ configured: Int, byDefault: Int) -> Int {
        configured > 0 ? min(configured, 64) : max(1, min(byDefault, 8))
    }

    /// The daemon's loops: enough for DNS and, when a proxy listens, for the proxy.
    var loopCount: Int {
        proxyListen.isEmpty && transparentListen.isEmpty ? threads : max(threads, proxyThreads)
    }
}
