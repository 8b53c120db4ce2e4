import Config
import DNSUpstream
import DomainMatch
import SystemIO

/// The default upstreams (docs/dns.md#forwarding): the `nameserver` lines of `/etc/resolv.conf`, minus
/// the gateway's own listen addresses (it must not forward to itself).
package enum ResolvConf {
    static func upstreams(path: String = "/etc/resolv.conf", excluding own: [ListenAddress]) -> [UpstreamSpec] {
        guard let bytes = try? Files.read(path, limit: 1 << 16) else { return [] }
        var result: [UpstreamSpec] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            // A zone index (fe80::1%eth0) cannot be expressed here; such lines are skipped.
            guard let address = IPAddress(words[1]) else { continue }
            let server = ListenAddress(address: address, port: 53)
            let isOwn = own.contains { listen in
                listen.port == 53 && (listen.address == address || listen.address.isUnspecified && address.isLoopback)
            }
            if !isOwn { result.append(UpstreamSpec(transport: .udp, server: server)) }
        }
        return result
    }
}

extension IPAddress {
    var isUnspecified: Bool { self == .v4(0) || self == .v6(high: 0, low: 0) }
}
