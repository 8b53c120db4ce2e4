import DNSProxy
import DNSWire
import DomainMatch
import Policy
import ProxyCore

/// Looks a host up for the proxy on one loop (docs/proxy.md#connect): A through the loop's
/// `QueryDriver`, and AAAA when A gives no address (the other way round when the query
/// prefers IPv6: a redirected connection's dialled IPv6 address to verify), typed all the way: the host was decided
/// once, by the connection, for its profile; the resolver only inspects the answer. The
/// completion runs on the loop thread, exactly once, possibly before `lookup` returns (a
/// cached answer). A safe-search target found in the chain comes back as `.rewrite` and the
/// connection asks for it in turn.
final class ProxyResolver {
    let driver: QueryDriver

    init(driver: QueryDriver) {
        self.driver = driver
    }

    /// The profile is the one the connection decided with (chosen by MAC, address or proxy
    /// user): a chain's block is a hit of that profile, even when a new snapshot came meanwhile.
    func lookup(_ query: HostQuery, client: IPAddress, completion: @escaping (ResolvedHost) -> Void) {
        let (name, profile, inspect) = (query.name, query.profile, query.inspect)
        let (first, second): (DNSType, DNSType) = query.preferIPv6 ? (.aaaa, .a) : (.a, .aaaa)
        driver.lookUpHost(name, type: first, profile: profile, inspect: inspect, client: client) { [driver] found in
            guard found == .noAddress else { return completion(found) }
            driver.lookUpHost(
                name, type: second, profile: profile, inspect: inspect, client: client, completion: completion)
        }
    }
}
