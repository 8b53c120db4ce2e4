// swift-tools-version:6.1
// phosra-gate: a network-level web filter for families (see README.md).
// Pure modules at the bottom (no sockets, no files), feature modules above, one
// composition root (Gateway) and a thin executable. Nothing points upward.
import PackageDescription

let package = Package(
    name: "phosra-gate",
    products: [
        .executable(name: "phosra-gate", targets: ["phosra-gate"])
    ],
    targets: [
        // Names, list entries, list files and the matchers behind one interface. Pure.
        .target(name: "DomainMatch", dependencies: ["CPrefetch"]),
        // The compiler's prefetch hint, which Swift lacks, inlined from a header.
        .target(name: "CPrefetch"),
        // IANA zoneinfo (TZif) and POSIX TZ rules: wall clock of an instant and back.
        .target(name: "Zoneinfo"),
        // System calls through one wrapper (errno + call in the error), small file helpers, and
        // what blocking code needs of time and threads without the event loop: clocks,
        // threads, a doorbell to wait on.
        .target(name: "SystemIO", dependencies: ["CSystem", "Locks"]),
        // What Swift's Glibc import lacks: epoll (unpacked), eventfd, signalfd, recvmmsg/sendmmsg, splice, accept4,
        // rtnetlink and setns.
        .target(name: "CSystem"),
        // The byte buffer (reader and writer index, copy-on-write) that sockets read into and the
        // pure parsers and state machines read from. Pure.
        .target(name: "Bytes"),
        // ThreadSanitizer's acquire/release annotations as weak symbols, for `Locks`.
        .target(name: "CThreadSanitizer"),
        // `Lock`: Synchronization.Mutex with its hand-overs told to ThreadSanitizer in the build
        // scripts/tsan makes, used for every lock in the package (docs/ARCHITECTURE.md#threads). Pure.
        .target(name: "Locks", dependencies: ["CThreadSanitizer"]),
        // epoll event loop, timers and sockets shared by the DNS and HTTP proxies (re-exports Bytes);
        // clocks and threads are SystemIO's, so blocking code (the sync) need not import it.
        .target(name: "EventLoop", dependencies: ["Locks", "Bytes", "CSystem", "SystemIO", "Metrics"]),
        // CompiledPolicy model, categories, time rules, safe search and decide(). Pure.
        .target(name: "Policy", dependencies: ["Locks", "DomainMatch", "Zoneinfo"]),
        // The configuration file format, flags, and typed keys (declared in Gateway) → typed settings.
        .target(name: "Config", dependencies: ["SystemIO"]),
        // DNS message parse/serialize (RFC 1035, 6891, 8914, 9460). Pure.
        .target(name: "DNSWire"),
        // Counters, histograms and Prometheus's text format: lock-free on the hot path. Pure.
        .target(name: "Metrics", dependencies: ["Locks"]),
        // The DNS proxy: stages from packet to answer, the cache, upstreams.
        .target(
            name: "DNSProxy",
            dependencies: [
                "Locks",
                "DNSWire", "DomainMatch", "Policy", "Zoneinfo", "DNSUpstream", "EventLoop", "SystemIO", "Neighbours",
                "Metrics",
            ]),
        // Strict base64 (RFC 4648 §4), padded or not: Basic credentials and password hashes. Pure.
        .target(name: "Base64"),
        // HTTP/1.1 messages (RFC 9112): request and response heads, body framing, chunked bodies,
        // keep-alive; each malformation a named error. Pure, no dependencies.
        .target(name: "HTTP1"),
        // The HTTP forward proxy's decisions as I/O-free state machines: a connection's life
        // (CONNECT with the SNI check, plain HTTP with the block page, PAC), the target policy,
        // the responses it makes, the heads it forwards. No sockets, no clock: the dependencies
        // leave out EventLoop, SystemIO, TLS and DNSProxy, so the compiler keeps it that way.
        .target(
            name: "ProxyCore", dependencies: ["Locks", "Base64", "Bytes", "HTTP1", "Policy", "DomainMatch", "Zoneinfo"]),
        // The HTTP proxy's socket driver on the DNS loops: accepts, reads and writes for ProxyCore's
        // state machines, carries out their actions, relays tunnels with splice(2), and looks
        // names up through the gateway's own resolver.
        .target(
            name: "HTTPProxy",
            dependencies: [
                "ProxyCore", "HTTP1", "EventLoop", "DNSProxy", "DNSWire", "Policy", "DomainMatch", "Zoneinfo",
                "SystemIO", "Metrics", "CSystem",
            ]),
        // The device (MAC address) behind a client's IP address, from the kernel's neighbour
        // tables over rtnetlink, cached per loop thread: the pure dump parser, the socket, the cache.
        .target(name: "Neighbours", dependencies: ["DomainMatch", "EventLoop", "CSystem", "SystemIO"]),
        // The devices on the network for the parent's page: DHCP lease files parsed, vendors from the IEEE registry.
        .target(name: "Devices", dependencies: ["DomainMatch", "Zoneinfo", "SystemIO"]),
        // The nftables table of network enforcement (docs/network.md): who is caught, the rules, the
        // DNS-over-HTTPS address list's syntax, as text. Pure: no sockets, no processes.
        .target(name: "Firewall", dependencies: ["DomainMatch", "Policy"]),
        // Category list folders on disk and their manifest.
        .target(name: "Blocklists", dependencies: ["DomainMatch", "Policy", "SystemIO"]),
        // SQLite 3 from the system (Debian: libsqlite3-dev), plus SQLITE_TRANSIENT as a function.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The daemon's SQLite store: policies, sync state, hit queue and history, activity, heartbeat.
        .target(name: "Store", dependencies: ["Locks", "CSQLite", "SystemIO"]),
        // Sync with the Phosra API: schedule, enforcement reports, hits.
        .target(
            name: "Sync",
            dependencies: [
                "Locks", "Policy", "DomainMatch", "SystemIO", "Zoneinfo", "Store", "HTTPClient", "TLS",
            ]),
        // OpenSSL (libssl, libcrypto) from the system (Debian: libssl-dev).
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        // OpenSSL macros Swift cannot call (SNI, minimum version, BIO controls), as functions.
        .target(name: "COpenSSLShim", dependencies: ["COpenSSL"]),
        // Proxy passwords: scrypt hashes through OpenSSL (`phosra-gate passwd`), plain values,
        // verification in constant time with a cache of successes (docs/proxy.md#proxy-authentication).
        .target(name: "Passwords", dependencies: ["Locks", "Base64", "COpenSSL"]),
        // TLS on the event loop: a verifying client context, a server context (chain and key), one
        // non-blocking connection state machine for both sides, and self-signed certificates.
        .target(name: "TLS", dependencies: ["COpenSSL", "COpenSSLShim", "EventLoop", "SystemIO"]),
        // Forwarding one question to the configured upstreams: UDP, TCP, DNS-over-TLS (docs/dns.md#forwarding).
        .target(
            name: "DNSUpstream", dependencies: ["DNSWire", "DomainMatch", "EventLoop", "TLS", "SystemIO", "Metrics"]),
        // A small blocking HTTP/1.1 client over TCP or TLS for the sync thread (docs/sync.md);
        // HTTP1 parses what it reads.
        .target(name: "HTTPClient", dependencies: ["Locks", "HTTP1", "TLS", "EventLoop", "SystemIO"]),
        // Notifications to the parent (docs/requests-and-notifications.md#notifications): the
        // events, their ntfy and JSON shapes, the queue in the store and the thread that
        // delivers it.
        .target(name: "Notify", dependencies: ["Locks", "Store", "HTTPClient", "Base64", "SystemIO"]),
        // PostgreSQL's client library from the system (Debian: libpq-dev), for the shared store.
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        // The state gateways of one family share on PostgreSQL (docs/two-gateways.md): the
        // connection, the numbered schema under an advisory lock, minutes as facts, and the
        // overrides and devices each gateway copies between it and its own SQLite store.
        .target(name: "SharedStore", dependencies: ["CLibPQ", "SystemIO", "Store"]),
        // The matcher benchmark's reference strategies (a `Set<String>`, a hashed-suffix table,
        // a sorted label-reversed array, an SQLite table), its workload and options, query
        // mixes, timing and reports (table, JSON, CSV, SVG chart) (docs/benchmarks.md#bench-matcher);
        // nothing of the gateway. Not linked into the matcher: SQLite stays out of DomainMatch.
        .target(name: "MatcherBench", dependencies: ["Locks", "DomainMatch", "CSQLite", "SystemIO"]),
        // The parent's page on the LAN and its JSON API: sessions, CSRF, the pages, the
        // overrides a parent sets (docs/parent-page.md). Knows the gateway only as a `Household`.
        .target(
            name: "ParentPage",
            dependencies: [
                "Locks", "DomainMatch", "Zoneinfo", "Policy", "Store", "SystemIO", "HTTP1", "Passwords", "Base64",
                "EventLoop", "TLS", "Devices", "ProxyCore",
            ]),
        // Composition root: the settings schema, options, the profile plan, the snapshot
        // builder and the daemon (`Serve`) that `run` starts.
        .target(
            name: "Gateway",
            dependencies: [
                "Locks",
                "DomainMatch", "Zoneinfo", "Policy", "Config", "Blocklists", "SystemIO", "DNSWire", "DNSProxy",
                "Neighbours", "Metrics", "Firewall",
                "HTTPProxy", "ProxyCore", "EventLoop", "DNSUpstream", "TLS", "Store", "Sync", "HTTPClient",
                "Passwords", "CSystem", "ParentPage", "Notify", "Devices", "SharedStore",
            ]),
        // The command line: one `Command` per file in one table, one prologue (`CLI.main`).
        .target(
            name: "Commands",
            dependencies: [
                "Gateway",
                "Locks",
                "DomainMatch", "Zoneinfo", "Policy", "Config", "Blocklists", "SystemIO", "DNSWire", "DNSProxy",
                "Neighbours", "Metrics",
                "HTTPProxy", "ProxyCore", "EventLoop", "DNSUpstream", "TLS", "Store", "Sync", "HTTPClient",
                "Passwords", "Firewall", "MatcherBench", "CSystem", "Notify",
            ]),
        .executableTarget(name: "phosra-gate", dependencies: ["Commands"]),
        // Test data and helpers that are pure (no Foundation, no sockets), for the tests of pure
        // modules too: a seeded generator, hand-made TLS ClientHellos, the malformed-head table.
        .target(name: "TestFixtures", dependencies: ["HTTP1"]),
        // A malloc that counts per thread, for tests that show a path allocates nothing. Only
        // the test executable links it (through TestSupport).
        .target(name: "CAllocationCount"),
        // The fuzz targets: one body per parser of outside input, each checking a property
        // (docs/fuzzing.md). Run by libFuzzer through `scripts/fuzz`, and over the kept corpus
        // and every past crash by FuzzTargetsTests. Pure, like the parsers it drives.
        .target(
            name: "FuzzTargets",
            dependencies: ["DNSWire", "HTTP1", "Bytes", "ProxyCore", "Policy", "Config", "DomainMatch", "Zoneinfo"]),
        // Helpers for tests only: scratch directories, free ports, child processes, dig,
        // the fake Phosra API and HTTP(S) test servers (re-exports TestFixtures).
        .target(
            name: "TestSupport",
            dependencies: [
                "Locks", "COpenSSL", "EventLoop", "HTTP1", "TestFixtures", "CSystem", "SystemIO", "CAllocationCount",
            ]),

        // `phosra-gate run` in a test's process on a clock the test moves (tests only).
        .target(
            name: "GateHarness", dependencies: ["Commands", "Gateway", "SystemIO", "TestSupport"]),

        .testTarget(name: "DomainMatchTests", dependencies: ["DomainMatch", "TestSupport"]),
        .testTarget(name: "MatcherBenchTests", dependencies: ["MatcherBench", "DomainMatch", "TestSupport"]),
        .testTarget(name: "ZoneinfoTests", dependencies: ["Zoneinfo", "TestSupport"]),
        .testTarget(name: "DNSWireTests", dependencies: ["DNSWire", "TestSupport"]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "CSystem", "SystemIO", "TestSupport"]),
        .testTarget(name: "Base64Tests", dependencies: ["Base64"]),
        .testTarget(name: "PasswordsTests", dependencies: ["Passwords", "Base64"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1", "TestFixtures"]),
        .testTarget(
            name: "ProxyCoreTests",
            dependencies: ["ProxyCore", "HTTP1", "Bytes", "Policy", "DomainMatch", "Zoneinfo", "TestFixtures"]),
        .testTarget(
            name: "DNSProxyTests",
            dependencies: [
                "Locks", "DNSProxy", "DNSWire", "DomainMatch", "Policy", "Zoneinfo", "DNSUpstream", "TestSupport",
                "EventLoop",
            ]),
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "DomainMatch", "Zoneinfo"], exclude: ["Fixtures"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "SystemIO"]),
        .testTarget(
            name: "NeighboursTests",
            dependencies: ["Neighbours", "DomainMatch", "EventLoop", "CSystem", "SystemIO", "TestSupport"]),
        .testTarget(
            name: "ParentPageTests",
            dependencies: [
                "ParentPage", "Zoneinfo", "TestSupport", "Store", "Policy", "DomainMatch", "SystemIO", "HTTP1",
                "Passwords",
            ]),
        .testTarget(name: "DevicesTests", dependencies: ["Devices", "DomainMatch", "SystemIO", "TestSupport"]),
        .testTarget(name: "FirewallTests", dependencies: ["Firewall", "DomainMatch", "Policy", "TestSupport"]),
        .testTarget(name: "BlocklistsTests", dependencies: ["Blocklists", "DomainMatch", "Policy", "SystemIO"]),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "COpenSSL", "EventLoop", "SystemIO", "TestSupport"]),
        .testTarget(
            name: "DNSUpstreamTests",
            dependencies: [
                "Locks",
                "DNSUpstream", "DNSWire", "TLS", "DomainMatch", "EventLoop", "SystemIO",
                "TestSupport",
            ]),
        .testTarget(
            name: "SyncTests",
            dependencies: [
                "Locks", "Sync", "Policy", "DomainMatch", "Store", "EventLoop", "HTTPClient", "TestSupport",
            ]),
        .testTarget(name: "StoreTests", dependencies: ["Locks", "Store", "SystemIO", "TestSupport"]),
        .testTarget(name: "SharedStoreTests", dependencies: ["SharedStore", "TestSupport", "Store", "SystemIO"]),
        .testTarget(
            name: "NotifyTests",
            dependencies: ["Notify", "Store", "HTTPClient", "EventLoop", "SystemIO", "TestSupport", "Locks"]),
        .testTarget(
            name: "HTTPProxyTests",
            dependencies: [
                "Locks", "HTTPProxy", "ProxyCore", "EventLoop", "TestFixtures", "TestSupport", "DNSProxy", "DNSWire",
                "DomainMatch", "Policy", "SystemIO", "DNSUpstream",
            ]),
        .testTarget(name: "LocksTests", dependencies: ["Locks", "EventLoop"]),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"]),
        .testTarget(
            name: "HTTPClientTests", dependencies: ["HTTPClient", "TLS", "EventLoop", "SystemIO", "TestSupport"]),
        .testTarget(name: "FakePhosraAPITests", dependencies: ["TestSupport", "HTTPClient", "TLS", "SystemIO"]),
        .testTarget(
            name: "SyncIntegrationTests", dependencies: ["phosra-gate", "GateHarness", "TestSupport", "Store"]),
        .testTarget(
            name: "DNSIntegrationTests", dependencies: ["phosra-gate", "GateHarness", "TestSupport", "Firewall"]),
        .testTarget(
            name: "HTTPProxyIntegrationTests", dependencies: ["phosra-gate", "GateHarness", "TestSupport", "Store"]),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "phosra-gate", "Commands", "Gateway", "GateHarness", "Config", "Zoneinfo", "Passwords", "TestSupport",
                "Store", "Sync", "DNSWire", "DNSProxy",
            ]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"]),
        // The whole daemon under mixed load for minutes (scripts/soak); skipped unless
        // PHOSRA_GATE_SOAK_MINUTES is set.
        .testTarget(name: "SoakTests", dependencies: ["Locks", "phosra-gate", "TestSupport", "Store", "DNSWire"]),
        // The docs' links and anchors, and the pages code comments cite; reads files only.
        .testTarget(name: "DocsTests"),
    ],
    swiftLanguageModes: [.v6]
)

// `scripts/fuzz` sets PHOSRA_FUZZ=1 (with its own scratch path) to add the libFuzzer driver,
// built with `-Xswiftc -sanitize=fuzzer,address`: linked without libFuzzer's runtime it would
// not link, so it exists only then and ordinary builds and tests never see it.
if Context.environment["PHOSRA_FUZZ"] != nil {
    package.products.append(.executable(name: "phosra-fuzz", targets: ["phosra-fuzz"]))
    package.targets.append(
        .executableTarget(name: "phosra-fuzz", dependencies: ["FuzzTargets"], path: "Tests/Fuzz/Entry"))
}

// `scripts/tsan` sets PHOSRA_TSAN=1 (with its own scratch path, beside `--sanitize=thread`) so
// that `Locks.Lock` tells ThreadSanitizer about its hand-overs; every other build compiles
// those calls out and a `Lock` costs exactly what a `Mutex` does.
if Context.environment["PHOSRA_TSAN"] != nil, let locks = package.targets.first(where: { $0.name == "Locks" }) {
    locks.swiftSettings = (locks.swiftSettings ?? []) + [.define("PHOSRA_TSAN")]
}
