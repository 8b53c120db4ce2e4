import Glibc
import SystemIO

/// Every connection the caps allow holds a descriptor (a tunnel two), so the process's
/// open-file limit must cover them all, or accept(2) fails with EMFILE for everyone once
/// one device has filled it (docs/configuration.md#limits). The soft limit is raised as
/// far as the hard limit allows; a hard limit below what the caps need is said once at
/// start.
package enum OpenFileLimit {
    /// Descriptors the caps in `options` may take, plus room for the store, lists, loops,
    /// upstream sockets and the sync.
    static func needed(_ options: RunOptions) -> Int {
        let proxy = options.proxy.maxConnections == 0 ? 65_536 : 2 * options.proxy.maxConnections
        let tcp = options.tcpMax == 0 ? 65_536 : options.tcpMax
        return tcp + (options.proxyListen.isEmpty && options.transparentListen.isEmpty ? 0 : proxy) + 512
    }

    /// Raises the soft limit towards `needed`; logs `open_file_limit` when the hard limit
    /// stops short of it.
    static func raise(toCover needed: Int, log: Logger) {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0 else { return }
        let wanted = rlim_t(needed)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = min(wanted, limit.rlim_max)
            _ = setrlimit(openFiles, &limit)
        }
        if limit.rlim_max < wanted {
            log.warn(
                "open_file_limit",
                [
                    ("limit", "\(limit.rlim_max)"), ("needed", "\(needed)"),
                    ("note", "lower tcp_max or proxy_max_conns, or raise LimitNOFILE"),
                ])
        }
    }

    /// `RLIMIT_NOFILE` as `getrlimit` takes it (Glibc imports it as an enum case).
    private static var openFiles: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
