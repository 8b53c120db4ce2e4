extension ConfigKey {
    /// Every key of SPEC §4–§8 with its default. Order is the README's order.
    public static let all: [ConfigKey] = [
        // Files and places.
        ConfigKey("policy", .string, "", reload: true, "a local CompiledPolicy file to enforce without the API (§8)"),
        ConfigKey("lists", .string, "", reload: true, "category lists folder (default: the project's or installed blocklists/)"),
        ConfigKey("state_dir", .string, "/var/lib/phosra-gate", reload: false, "SQLite store, device keys, compiled list cache"),
        ConfigKey("timezone", .string, "", reload: true, "IANA zone for the time rules (default: the system's)"),
        // Decision (§3).
        ConfigKey("api", .formatted(.url, list: false), "https://phosra-api.fly.dev/api/v1", reload: true, "Phosra API base URL; its host is always allowed"),
        ConfigKey("always_allow", .list, "", reload: true, "names never blocked, not even in a cutoff"),
        ConfigKey("downtime_allow", .list, "", reload: true, "names that skip the downtime/schedule cutoff only"),
        ConfigKey("block_bypass", .boolean, "true", reload: true, "block encrypted-DNS, relay and proxy bypass names"),
        // DNS proxy (§4).
        ConfigKey("dns_listen", .formatted(.listenAddress, list: true), "0.0.0.0:53", reload: false, "DNS listen addresses, ADDR:PORT"),
        ConfigKey("upstream", .formatted(.upstream, list: true), "", reload: true, "upstream resolvers: IP[:port], tcp://IP[:port], tls://IP[:853]#name (default: /etc/resolv.conf)"),
        ConfigKey("upstream_timeout", .duration, "800ms", reload: true, "per-upstream timeout"),
        ConfigKey("ca_file", .string, "", reload: true, "CA bundle for DNS-over-TLS and the API (default: system store)"),
        ConfigKey("local_forward", .formatted(.localForward, list: true), "", reload: true, "ZONE=IP[:port] servers for private/local zones"),
        ConfigKey("allow_clients", .formatted(.addressRange, list: true), "", reload: true, "CIDRs answered (default: loopback, private, link-local, own IPv6 prefixes)"),
        ConfigKey("block_mode", .formatted(.blockMode, list: false), "nxdomain", reload: true, "nxdomain | null | refused | ip:V4[,V6]"),
        ConfigKey("block_ttl", .duration, "10s", reload: true, "TTL of block answers"),
        ConfigKey("tcp_idle", .duration, "10s", reload: true, "idle timeout of DNS TCP connections"),
        ConfigKey("dns_threads", .integer, "0", reload: false, "DNS loop threads; 0 = half the cores (1 to 8)"),
        ConfigKey("cache_size", .integer, "100000", reload: true, "cached upstream answers (LRU)"),
        ConfigKey("cache_min_ttl", .duration, "0s", reload: true, "lower TTL clamp"),
        ConfigKey("cache_max_ttl", .duration, "1d", reload: true, "upper TTL clamp"),
        ConfigKey("serve_stale_max", .duration, "1d", reload: true, "how long past expiry a stale answer may be served"),
        ConfigKey("rate_limit", .integer, "1000", reload: true, "queries/s per client (burst 2×); 0 = off"),
        // HTTP proxy (§5).
        ConfigKey("proxy_listen", .formatted(.listenAddress, list: true), "", reload: false, "HTTP proxy listen addresses, ADDR:PORT"),
        ConfigKey("connect_ports", .formatted(.port, list: true), "443", reload: true, "ports CONNECT may reach"),
        ConfigKey("allow_ip_connect", .boolean, "false", reload: true, "allow CONNECT to IP literals"),
        ConfigKey("connect_timeout", .duration, "10s", reload: true, "upstream connect timeout"),
        ConfigKey("tunnel_idle", .duration, "5m", reload: true, "idle timeout of CONNECT tunnels"),
        ConfigKey("proxy_max_conns_per_client", .integer, "256", reload: true, "connections per client; 0 = no limit"),
        ConfigKey("gateway_name", .string, "", reload: true, "name shown on the block page (default: host name)"),
        // Profiles (§6).
        ConfigKey("default_profile", .string, "", reload: true, "profile for clients no profile covers, or none"),
        ConfigKey("clients", .list, "", reload: true, scope: .profile, "IPs, CIDRs or MAC addresses this profile covers"),
        ConfigKey("proxy_user", .string, "", reload: true, scope: .profile, "proxy user name that selects this profile"),
        ConfigKey("proxy_password", .string, "", reload: true, scope: .profile, "its password (Proxy-Authorization: Basic)"),
        ConfigKey("child_id", .string, "", reload: false, scope: .profile, "the Phosra child this profile is registered for"),
        // Sync and reports (§7).
        ConfigKey("initial_policy", .choice(["strict", "none"]), "strict", reload: true, scope: .both, "enforced until a first policy arrives"),
        ConfigKey("on_no_policy", .choice(["keep", "allow"]), "keep", reload: true, scope: .both, "what a 404 from the API means"),
        ConfigKey("poll_interval", .duration, "120s", reload: true, "policy poll interval (±10 % jitter)"),
        ConfigKey("full_sync_interval", .duration, "6h", reload: true, "unconditional policy fetch interval"),
        ConfigKey("report_interval", .duration, "60s", reload: true, "hit report interval"),
        ConfigKey("revoke_after", .duration, "30m", reload: true, "401s for this long mark a profile revoked"),
        ConfigKey("backoff_max", .duration, "5m", reload: true, "longest retry backoff"),
        ConfigKey("hit_queue_max", .integer, "100000", reload: true, "queued hit rows before merging"),
        ConfigKey("hit_retention", .duration, "7d", reload: true, "local hit history kept for `hits`"),
        // Operation (§8).
        ConfigKey("log_format", .choice(["keyvalue", "json"]), "keyvalue", reload: true, "log line format"),
        ConfigKey("metrics_listen", .formatted(.listenAddress, list: false), "", reload: false, "Prometheus metrics ADDR:PORT (off when empty)"),
    ]
}
