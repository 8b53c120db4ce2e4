import Config
import DNSProxy
import DNSUpstream
import DomainMatch
import Firewall
import HTTPClient
import Notify
import ParentPage
import Policy
import ProxyCore
import Sync
import SystemIO

/// Every configuration key, each declared once: name, type, default, whether `SIGHUP`
/// applies a change without a restart, and a line of help. Read a value with
/// `settings[Key.rateLimit]`; the types come from the modules that own them.
/// docs/configuration.md lists the same keys (a test compares the two).
package enum Key {
    // Files and places.
    static let policy = ConfigKey(
        "policy", .string, reload: false, scope: .both,
        "a local CompiledPolicy file to enforce without the API (in a [profile] section: that profile's)")
    package static let lists = ConfigKey(
        "lists", .string, reload: true, "category lists folder (default: the project's or installed blocklists/)")
    package static let stateDir = ConfigKey(
        "state_dir", .string, default: "/var/lib/phosra-gate", reload: false,
        "SQLite store, device keys, compiled list cache")
    static let timezone = ConfigKey(
        "timezone", .string, reload: true, "IANA zone for the time rules (default: the system's)")

    // The decision.
    package static let api = ConfigKey(
        "api", .apiURL, default: "https://phosra-api.fly.dev/api/v1", reload: false,
        "Phosra API base URL; its host is always allowed")
    static let alwaysAllow = ConfigKey(
        "always_allow", .strings, reload: true, "names never blocked, not even in a cutoff")
    static let downtimeAllow = ConfigKey(
        "downtime_allow", .strings, reload: true, "names that skip the downtime/schedule cutoff only")
    static let backgroundDomains = ConfigKey(
        "background_domains", .strings, reload: true,
        "names the devices ask for on their own: they spend no minute online and pass the daily limit")
    static let blockBypass = ConfigKey(
        "block_bypass", .boolean, default: "true", reload: true, "block encrypted-DNS, relay and proxy bypass names")

    // The DNS proxy.
    package static let dnsListen = ConfigKey(
        "dns_listen", .listenAddresses, default: "0.0.0.0:53", reload: false, "DNS listen addresses, ADDR:PORT")
    static let upstream = ConfigKey(
        "upstream", .upstreams, reload: true,
        "upstream resolvers: IP[:port], tcp://IP[:port], tls://IP[:853]#name (default: /etc/resolv.conf)")
    static let upstreamTimeout = ConfigKey(
        "upstream_timeout", .duration, default: "800ms", reload: false, "per-upstream timeout")
    package static let caFile = ConfigKey(
        "ca_file", .string, reload: false, "CA bundle for DNS-over-TLS and the API (default: system store)")
    static let localForward = ConfigKey(
        "local_forward", .localForwards, reload: true, "ZONE=IP[:port] servers for private/local zones")
    static let rebindAllow = ConfigKey(
        "rebind_allow", .domains, default: "home.arpa, lan, local, internal", reload: true,
        "domains whose answers may hold private and loopback addresses (local_forward zones are added)")
    static let allowClients = ConfigKey(
        "allow_clients", .addressRanges, reload: true,
        "CIDRs answered (default: loopback, private, link-local, own IPv6 prefixes)")
    static let blockMode = ConfigKey(
        "block_mode", .blockMode, default: "nxdomain", reload: true, "nxdomain | null | refused | ip:V4[,V6]")
    static let blockTTL = ConfigKey("block_ttl", .duration, default: "10s", reload: true, "TTL of block answers")
    static let tcpIdle = ConfigKey(
        "tcp_idle", .duration, default: "10s", reload: false, "idle timeout of DNS TCP connections")
    static let tcpReadTimeout = ConfigKey(
        "tcp_read_timeout", .duration, default: "5s", reload: false,
        "a DNS TCP message must arrive whole this long after its first byte")
    static let tcpMaxPerClient = ConfigKey(
        "tcp_max_per_client", .integer, default: "16", reload: false,
        "DNS TCP connections per client (its oldest idle one is shed); 0 = no limit")
    static let tcpMax = ConfigKey(
        "tcp_max", .integer, default: "2048", reload: false,
        "DNS TCP connections in all (the oldest idle one is shed); 0 = no limit")
    static let dnsThreads = ConfigKey(
        "dns_threads", .integer, default: "0", reload: false, "DNS loop threads; 0 = half the cores (1 to 8)")
    static let cacheSize = ConfigKey(
        "cache_size", .integer, default: "100000", reload: false, "cached upstream answers (LRU)")
    static let cacheMinTTL = ConfigKey("cache_min_ttl", .duration, default: "0s", reload: true, "lower TTL clamp")
    static let cacheMaxTTL = ConfigKey("cache_max_ttl", .duration, default: "1d", reload: true, "upper TTL clamp")
    static let serveStaleMax = ConfigKey(
        "serve_stale_max", .duration, default: "1d", reload: false,
        "how long past expiry a stale answer may be served")
    static let rateLimit = ConfigKey(
        "rate_limit", .integer, default: "1000", reload: true, "queries/s per client (burst 2×); 0 = off")

    // The HTTP proxy.
    static let proxyListen = ConfigKey(
        "proxy_listen", .listenAddresses, reload: false, "HTTP proxy listen addresses, ADDR:PORT")
    package static let transparentListen = ConfigKey(
        "transparent_listen", .listenAddresses, reload: false,
        "transparent listener for ports 80 and 443 redirected by the firewall, ADDR:PORT")
    static let transparentDestination = ConfigKey(
        "transparent_destination", .choice(TransparentDestination.self), default: "connect", reload: true,
        "where a redirected connection's allowed name goes: connect (its own address) or verify (the dialled one, "
            + "only if the name's)")
    static let connectPorts = ConfigKey(
        "connect_ports", .ports, default: "443", reload: true, "ports CONNECT may reach")
    static let allowIPConnect = ConfigKey(
        "allow_ip_connect", .boolean, default: "false", reload: true, "allow CONNECT to IP literals")
    static let connectTimeout = ConfigKey(
        "connect_timeout", .duration, default: "10s", reload: true, "upstream connect timeout")
    static let tunnelIdle = ConfigKey(
        "tunnel_idle", .duration, default: "5m", reload: true, "idle timeout of CONNECT tunnels")
    static let stallTimeout = ConfigKey(
        "stall_timeout", .duration, default: "60s", reload: true,
        "a tunnel or exchange whose device has read nothing of what waits for it this long is reset")
    static let proxyThreads = ConfigKey(
        "proxy_threads", .integer, default: "0", reload: false,
        "loop threads taking proxy connections; 0 = every core (1 to 8)")
    static let proxyMaxConnsPerClient = ConfigKey(
        "proxy_max_conns_per_client", .integer, default: "256", reload: true,
        "connections per device (429 beyond); 0 = no limit")
    static let proxyMaxConns = ConfigKey(
        "proxy_max_conns", .integer, default: "4096", reload: true,
        "proxy connections in all (the oldest not yet asking is shed); 0 = no limit")
    static let httpPorts = ConfigKey(
        "http_ports", .ports, default: "80,8080", reload: true, "ports plain-HTTP requests may reach")
    static let allowLocalDestinations = ConfigKey(
        "allow_local_destinations", .boolean, default: "false", reload: true,
        "for tests: let the proxy reach loopback, link-local and the gateway's own addresses, and answers hold them")
    static let gatewayName = ConfigKey(
        "gateway_name", .string, reload: true, "name shown on the block page (default: host name)")
    static let proxyAuth = ConfigKey(
        "proxy_auth", .choice(ProxyAuthMode.self), default: "optional", reload: true,
        "required: 407 for proxy clients that no profile's clients entry covers")

    // Network enforcement: the firewall (docs/network.md).
    package static let lanInterfaces = ConfigKey(
        "lan_interfaces", .interfaceNames, reload: false,
        "interfaces the LAN is on: DNS and the proxy serve only them and loopback; the firewall catches what enters")
    package static let dohAddresses = ConfigKey(
        "doh_addresses", .addressRanges, reload: false,
        "DNS-over-HTTPS resolver addresses (IP or CIDR) the firewall adds to the built-in list")
    package static let egress = ConfigKey(
        "egress", .choice(Egress.self), default: "web", reload: false, scope: .both,
        "web: a filtered profile's devices reach only DNS, the web and the built-in set; open: every port")
    package static let egressAllow = ConfigKey(
        "egress_allow", .egressRules, reload: false,
        "more that egress = web devices may reach: tcp/993, udp/3478-3481, tcp/22@203.0.113.0/24")
    package static let egressAttempts = ConfigKey(
        "egress_attempts", .string, default: "/run/phosra-gate/egress-attempts", reload: false,
        "file where firewall watch leaves the refused egress attempts and the daemon reads them")

    // Downloading the manifest's lists (docs/blocklists.md#updating-lists).
    package static let listMaxSize = ConfigKey(
        "list_max_size", .integer, default: "67108864", reload: true,
        "largest list blocklists update downloads, in bytes (64 MiB)")
    package static let listTimeout = ConfigKey(
        "list_timeout", .duration, default: "60s", reload: true, "time blocklists update gives one list's download")

    // Profiles.
    static let defaultProfile = ConfigKey(
        "default_profile", .string, reload: true, "profile for clients no profile covers, or none")
    static let clients = ConfigKey(
        "clients", .clientEntries, reload: true, scope: .profile, "IPs, CIDRs or MAC addresses this profile covers")
    static let proxyUser = ConfigKey(
        "proxy_user", .string, reload: true, scope: .profile, "proxy user name that selects this profile")
    static let proxyPassword = ConfigKey(
        "proxy_password", .string, reload: true, scope: .profile, "its password (Proxy-Authorization: Basic)")
    package static let childID = ConfigKey(
        "child_id", .string, reload: false, scope: .profile, "the Phosra child this profile is registered for")

    // Sync and reports.
    static let initialPolicy = ConfigKey(
        "initial_policy", .choice(InitialPolicy.self), default: "strict", reload: false, scope: .both,
        "enforced until a first policy arrives")
    package static let onNoPolicy = ConfigKey(
        "on_no_policy", .choice(NoPolicyAction.self), default: "keep", reload: false, scope: .both,
        "what a 404 from the API means")
    static let pollInterval = ConfigKey(
        "poll_interval", .duration, default: "120s", reload: false, "policy poll interval (±10 % jitter)")
    static let fullSyncInterval = ConfigKey(
        "full_sync_interval", .duration, default: "6h", reload: false, "unconditional policy fetch interval")
    static let reportInterval = ConfigKey(
        "report_interval", .duration, default: "60s", reload: false, "hit report interval")
    static let revokeAfter = ConfigKey(
        "revoke_after", .duration, default: "30m", reload: false, "401s for this long mark a profile revoked")
    static let backoffMax = ConfigKey(
        "backoff_max", .duration, default: "5m", reload: false, "longest retry backoff")
    static let hitQueueMax = ConfigKey(
        "hit_queue_max", .integer, default: "100000", reload: false, "queued hit rows before merging")
    static let hitHistoryMax = ConfigKey(
        "hit_history_max", .integer, default: "100000", reload: false, "hit history rows before merging")
    static let hitNamesPerMinute = ConfigKey(
        "hit_names_per_minute", .integer, default: "300", reload: false,
        "distinct blocked names a profile records a minute before new ones fold into their rule")
    static let hitRetention = ConfigKey(
        "hit_retention", .duration, default: "7d", reload: false,
        "local hit history, hourly activity and devices seen kept for `hits` and `status`")

    // Operation.
    package static let logFormat = ConfigKey(
        "log_format", .choice(Logger.Format.self), default: "keyvalue", reload: false, "log line format")
    static let metricsListen = ConfigKey(
        "metrics_listen", .optionalListenAddress, reload: false, "Prometheus metrics ADDR:PORT (off when empty)")

    // The parent's page (docs/parent-page.md).
    package static let webListen = ConfigKey(
        "web_listen", .listenAddresses, reload: false,
        "the parent's page over HTTPS, ADDR:PORT (default: port 8443 on the lan_interfaces' addresses, else loopback)")
    package static let webHTTPListen = ConfigKey(
        "web_http_listen", .listenAddresses, reload: false,
        "plain HTTP that only redirects to the page, ADDR:PORT (default: port 8080 where web_listen is)")
    package static let childListen = ConfigKey(
        "child_listen", .listenAddresses, reload: false,
        "the child's page over plain HTTP, ADDR:PORT (default: port 80 on the lan_interfaces' addresses; none without)")
    package static let homeName = ConfigKey(
        "home_name", .string, default: "gate.home.arpa", reload: false,
        "the name the gateway answers with its own address, for the child's page")
    package static let webTLSCert = ConfigKey(
        "web_tls_cert", .string, reload: false, "the page's certificate, PEM (default: one made at first start)")
    package static let webTLSKey = ConfigKey("web_tls_key", .string, reload: false, "the key of web_tls_cert, PEM")
    package static let webNames = ConfigKey(
        "web_names", .strings, reload: false,
        "more host names the page answers to (besides the host's name, its addresses and localhost)")
    package static let dhcpLeases = ConfigKey(
        "dhcp_leases", .string, reload: false,
        "the DHCP server's lease file (dnsmasq, ISC dhcpd, Kea CSV or odhcpd): device names for the page")
    package static let webAllowClients = ConfigKey(
        "web_allow_clients", .pageClients, reload: false,
        "the only devices the page answers: IPs, CIDRs, MAC addresses or profile names (default: any)")

    // Notifications to the parent (docs/requests-and-notifications.md#notifications).
    package static let notifyURL = ConfigKey(
        "notify_url", .notifyURL, reload: false,
        "where the parent's notifications go: an ntfy topic URL or a JSON webhook (default: none, off)")
    package static let notifyFormat = ConfigKey(
        "notify_format", .choice(NotifyTarget.Format.self), default: "ntfy", reload: false,
        "ntfy (message body, Title/Priority/Tags/Click headers) or json (one object per event)")
    package static let notifyTokenFile = ConfigKey(
        "notify_token_file", .string, reload: false, "a file holding the receiver's bearer token (optional)")
    package static let notifyEvents = ConfigKey(
        "notify_events", .noticeKinds, default: "ask, new_device, budget_spent, circumvention, trouble, summary",
        reload: false, "the events sent")
    package static let notifyCircumvention = ConfigKey(
        "notify_circumvention", .integer, default: "5", reload: false,
        "attempts around the filter from one device in 10 minutes before it is an event (more than this)")
    package static let sharedStore = ConfigKey(
        "shared_store", .postgresURL, reload: false,
        "the PostgreSQL database gateways of one family share (default: none, this gateway alone)")
    package static let sharedStorePasswordFile = ConfigKey(
        "shared_store_password_file", .string, reload: false,
        "a file holding the shared store's password (optional; else libpq's ~/.pgpass or none)")
    package static let summaryTime = ConfigKey(
        "summary_time", .timeOfDay, default: "20:00", reload: false,
        "when each child's daily summary is made, local HH:MM (on the page, and sent when notifications are on)")
    package static let notifyQueueMax = ConfigKey(
        "notify_queue_max", .integer, default: "500", reload: false,
        "events kept for a receiver that is away; past it the oldest are dropped and counted")

    /// Every key in the documentation's order: what the parser and the flags accept.
    static let all: [AnyConfigKey] = [
        policy.erased, lists.erased, stateDir.erased, timezone.erased,
        api.erased, alwaysAllow.erased, downtimeAllow.erased, backgroundDomains.erased, blockBypass.erased,
        dnsListen.erased, upstream.erased, upstreamTimeout.erased, caFile.erased, localForward.erased,
        rebindAllow.erased, allowClients.erased, blockMode.erased, blockTTL.erased, tcpIdle.erased,
        tcpReadTimeout.erased,
        tcpMaxPerClient.erased, tcpMax.erased, dnsThreads.erased,
        cacheSize.erased, cacheMinTTL.erased, cacheMaxTTL.erased, serveStaleMax.erased, rateLimit.erased,
        proxyListen.erased, transparentListen.erased, transparentDestination.erased, connectPorts.erased,
        allowIPConnect.erased, connectTimeout.erased,
        tunnelIdle.erased, stallTimeout.erased, proxyThreads.erased, proxyMaxConnsPerClient.erased,
        proxyMaxConns.erased, httpPorts.erased,
        allowLocalDestinations.erased, gatewayName.erased, proxyAuth.erased,
        lanInterfaces.erased, dohAddresses.erased, egress.erased, egressAllow.erased, egressAttempts.erased,
        listMaxSize.erased, listTimeout.erased,
        defaultProfile.erased, clients.erased, proxyUser.erased, proxyPassword.erased, childID.erased,
        initialPolicy.erased, onNoPolicy.erased, pollInterval.erased, fullSyncInterval.erased,
        reportInterval.erased, revokeAfter.erased, backoffMax.erased, hitQueueMax.erased, hitHistoryMax.erased,
        hitNamesPerMinute.erased, hitRetention.erased,
        logFormat.erased, metricsListen.erased,
        webListen.erased, webHTTPListen.erased, childListen.erased, homeName.erased, webTLSCert.erased,
        webTLSKey.erased, webNames.erased,
        webAllowClients.erased, dhcpLeases.erased,
        notifyURL.erased, notifyFormat.erased, notifyTokenFile.erased, notifyEvents.erased,
        notifyCircumvention.erased, notifyQueueMax.erased, summaryTime.erased, sharedStore.erased,
        sharedStorePasswordFile.erased,
    ]

    package static let schema = ConfigSchema(all)
}

/// The forms of values that need more than a word, each parsed by the type that owns it.
extension ValueType where Value == ListenAddress {
    static let listenAddress = ValueType.form("ADDR:PORT") { ListenAddress($0) }
}

extension ValueType where Value == [ListenAddress] {
    static let listenAddresses = ValueType<ListenAddress>.listenAddress.list
}

extension ValueType where Value == ListenAddress? {
    static let optionalListenAddress = ValueType<ListenAddress>.listenAddress.optional
}

extension ValueType where Value == [UpstreamSpec] {
    static let upstreams = ValueType<UpstreamSpec>.form(
        "upstream", expected: "an upstream (IP[:port], tcp://IP[:port] or tls://IP[:853]#servername)"
    ) { UpstreamSpec($0) }.list
}

extension ValueType where Value == [AddressRange] {
    static let addressRanges = ValueType<AddressRange>.form("IP or CIDR") { AddressRange($0) }.list
}

extension ValueType where Value == [InterfaceName] {
    static let interfaceNames = ValueType<InterfaceName>.form(
        "interface", expected: "an interface name (letters, digits, - _ . @, at most 15, a final * for a prefix)"
    ) { InterfaceName($0) }.list
}

extension ValueType where Value == [EgressRule] {
    static let egressRules = ValueType<EgressRule>(name: "egress rule") { (text: String) in
        do throws(EgressRule.ParseError) {
            return .success(try EgressRule.parse(text))
        } catch {
            return .failure(ConfigProblem(error.description))
        }
    }.list
}

extension ValueType where Value == [UInt16] {
    static let ports = ValueType<UInt16>.form("port") { text in UInt16(text).flatMap { $0 > 0 ? $0 : nil } }.list
}

extension ValueType where Value == [ClientEntry] {
    static let clientEntries = ValueType<ClientEntry>.form(
        "client", expected: "an IP address, a CIDR or a MAC address (aa:bb:cc:dd:ee:ff)"
    ) { ClientEntry($0) }.list
}

extension ValueType where Value == [PageClients.Entry] {
    static let pageClients = ValueType<PageClients.Entry>.form(
        "page client", expected: "an IP address, a CIDR, a MAC address (aa:bb:cc:dd:ee:ff) or a profile name"
    ) { PageClients.Entry($0) }.list
}

extension ValueType where Value == BlockMode {
    static let blockMode = ValueType.form("block mode", expected: "nxdomain, null, refused or ip:V4[,V6]") {
        BlockMode($0)
    }
}

extension ValueType where Value == [DomainName] {
    static let domains = ValueType<DomainName>.form("domain") { try? QueryName.parse($0) }.list
}

extension ValueType where Value == [LocalForward] {
    static let localForwards = ValueType<LocalForward>.form("ZONE=IP[:port]") { LocalForward($0) }.list
}

extension ValueType where Value == String {
    /// The API base URL: `https://host[:port]/path` (or a bare host); kept as written.
    static let apiURL = ValueType.form("URL") { text in
        (try? ListEntry.parse(text, kind: .block, allowSingleLabel: true).get()) == nil ? nil : text
    }
}

extension ValueType where Value == HTTPURL? {
    /// `notify_url`: an http or https URL, or nothing (off).
    static let notifyURL = ValueType<HTTPURL>.form("URL", expected: "an http:// or https:// URL") {
        try? HTTPURL($0)
    }.optional
}

extension ValueType where Value == [Notice.Kind] {
    static let noticeKinds = ValueType<Notice.Kind>.choice(Notice.Kind.self).list
}

extension ValueType where Value == Int {
    /// `HH:MM`, 00:00 to 23:59: minutes after midnight.
    static let timeOfDay = ValueType.form("time of day", expected: "a time HH:MM (00:00 to 23:59)") { text in
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hour = Int(parts[0]),
            let minute = Int(parts[1]),
            (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }
}

extension ValueType where Value == String? {
    static let postgresURL = ValueType<String>.form("URL", expected: "a postgresql:// URL") { text in
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") ? text : nil
    }.optional
}
