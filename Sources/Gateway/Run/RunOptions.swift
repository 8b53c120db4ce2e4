import Config
import DNSProxy
import DomainMatch
import Glibc
import HTTPProxy
import Policy
import ProxyCore
import SystemIO

/// `run`'s settings, typed. The configuration keys were checked for form when read; what
/// needs more than one key (upstreams from resolv.conf minus our own addresses) is
/// settled here, with errors naming the key.
struct RunOptions {
    var dnsListen: [ListenAddress]
    var stateDirectory: String
    var upstreams: [UpstreamSpec]
    var upstreamTimeout: Int64
    var caFile: String?
    var blockMode: BlockMode
    var blockTTL: UInt32
    var tcpIdle: Int64
    var cacheSize: Int
    var cacheMinTTL: UInt32, cacheMaxTTL: UInt32
    var serveStaleMax: Int64
    var rateLimit: Int
    var allowClients: AccessList
    var localForward: [LocalForward]
    var logFormat: Logger.Format
    var threads: Int
    /// The HTTP proxy (SPEC §5): where it listens (empty: no proxy) and its reloadable keys.
    var proxyListen: [ListenAddress]
    var proxy: ProxySettings

    /// Without a configuration file (running from a checkout), DNS listens on
    /// 127.0.0.1:5300 (not 5353, which mDNS owns) and state lives in ./.phosra-gate.
    static let checkoutListen = [ListenAddress("127.0.0.1:5300")!]
    /// …and the HTTP proxy on 127.0.0.1:3128 (SPEC §8); with a configuration file,
    /// `proxy_listen` decides (empty by default: no proxy).
    static let checkoutProxyListen = [ListenAddress("127.0.0.1:3128")!]
    static let checkoutStateDirectory = ".phosra-gate"

    init(_ settings: Settings, fromCheckout: Bool) throws(GatewayError) {
        dnsListen = settings.global["dns_listen"] == nil && fromCheckout ? Self.checkoutListen
            : settings.list("dns_listen").compactMap(ListenAddress.init)
        stateDirectory = settings.global["state_dir"] == nil && fromCheckout ? Self.checkoutStateDirectory
            : settings.string("state_dir")
        let configured = settings.list("upstream").compactMap(UpstreamSpec.init)
        upstreams = configured.isEmpty ? ResolvConf.upstreams(excluding: dnsListen) : configured
        guard !upstreams.isEmpty else {
            throw .config(settings.error("upstream", "none given, and /etc/resolv.conf has no nameserver but our own addresses"))
        }
        upstreamTimeout = settings.duration("upstream_timeout")
        caFile = settings.string("ca_file").isEmpty ? nil : settings.string("ca_file")
        if let caFile, !Files.exists(caFile) { throw .config(settings.error("ca_file", "\(caFile): No such file or directory")) }
        blockMode = BlockMode(settings.string("block_mode")) ?? .nxdomain
        blockTTL = UInt32(clamping: settings.duration("block_ttl") / 1000)
        tcpIdle = settings.duration("tcp_idle")
        cacheSize = settings.integer("cache_size")
        cacheMinTTL = UInt32(clamping: settings.duration("cache_min_ttl") / 1000)
        cacheMaxTTL = UInt32(clamping: settings.duration("cache_max_ttl") / 1000)
        serveStaleMax = settings.duration("serve_stale_max")
        rateLimit = settings.integer("rate_limit")
        let ranges = settings.list("allow_clients").compactMap(AddressRange.init)
        allowClients = ranges.isEmpty ? .defaultClients(ownPrefixes: OwnPrefixes.globalIPv6()) : AccessList(ranges)
        localForward = settings.list("local_forward").compactMap(LocalForward.init)
        logFormat = Logger.Format(rawValue: settings.string("log_format")) ?? .keyvalue
        // Half the cores by default: the kernel's network processing, the HTTP proxy and
        // the sync need the rest (measured: on 2 cores one loop answers ~15 % more than two).
        let configuredThreads = settings.integer("dns_threads")
        threads = configuredThreads > 0 ? min(configuredThreads, 64)
            : max(1, min(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) / 2, 8))
        proxyListen = settings.global["proxy_listen"] == nil && fromCheckout ? Self.checkoutProxyListen
            : settings.list("proxy_listen").compactMap(ListenAddress.init)
        let gatewayName = settings.string("gateway_name")
        proxy = ProxySettings(connectPorts: Set(settings.list("connect_ports").compactMap { UInt16($0) }),
                              allowIPConnect: settings.boolean("allow_ip_connect"),
                              connectTimeout: Self.nanoseconds(settings.duration("connect_timeout")),
                              tunnelIdle: Self.nanoseconds(settings.duration("tunnel_idle")),
                              maxConnectionsPerClient: settings.integer("proxy_max_conns_per_client"),
                              gatewayName: gatewayName.isEmpty ? Self.hostName() : gatewayName)
        guard !dnsListen.isEmpty else { throw .config(settings.error("dns_listen", "no address to listen on")) }
        guard proxy.connectTimeout > 0 else { throw .config(settings.error("connect_timeout", "must be above 0")) }
        guard proxy.tunnelIdle > 0 else { throw .config(settings.error("tunnel_idle", "must be above 0")) }
        guard cacheMinTTL <= cacheMaxTTL else {
            throw .config(settings.error("cache_min_ttl", "is above cache_max_ttl"))
        }
    }
}

extension RunOptions {
    static func nanoseconds(_ milliseconds: Int64) -> UInt64 { UInt64(max(milliseconds, 0)) * 1_000_000 }

    /// The block page's gateway name when `gateway_name` is empty.
    static func hostName() -> String {
        var name = [UInt8](repeating: 0, count: 256)
        let status = name.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { gethostname($0.baseAddress!, $0.count - 1) }
        }
        let text = String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
        return status != 0 || text.isEmpty ? "phosra-gate" : text
    }
}

/// The global IPv6 prefixes (/64) of this host's interfaces, which `allow_clients`
/// includes by default (SPEC §4.2).
enum OwnPrefixes {
    static func globalIPv6() -> [AddressRange] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var ranges: [AddressRange] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET6) else { continue }
            let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
            // Global unicast is 2000::/3.
            guard bytes[0] & 0xE0 == 0x20 else { continue }
            ranges.append(AddressRange(address: IPAddress(v6Bytes: bytes), prefixLength: 64))
        }
        return ranges
    }
}
