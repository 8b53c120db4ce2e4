import DNSProxy
import DNSWire
import DomainMatch
import Policy
import ProxyCore

/// Looks a host up for the proxy on one loop (docs/proxy.md#connect): A through the loop's
/// `QueryDriver`, and AAAA when A gives no address, typed all the way: the host was decided
/// once, by the connection, for its profile; the resolver only inspects the answer. The
/// completion runs on the loop thread, exactly once, possibly before `lookup` returns (a
/// cached answer).
final class ProxyResolver {
    let driver: QueryDriver

    init(driver: QueryDriver) {
        self.driver = driver
    }

    /// The profile is the one the connection decided with (chosen by MAC, address or proxy
    /// user): a chain's block is a hit of that profile, even when a new snapshot came meanwhile.
    func lookup(_ query: HostQuery, client: IPAddress, completion: @escaping (LookupResult) -> Void) {
        ask(query.name, profile: query.profile, inspect: query.inspect, client: client, completion)
    }

    private func ask(
        _ name: DomainName, profile: Profile, inspect: Bool, client: IPAddress,
        _ completion: @escaping (LookupResult) -> Void
    ) {
        driver.lookUpHost(name, type: .a, profile: profile, inspect: inspect, client: client) { [self] found in
            switch found {
            case .noAddress:
                driver.lookUpHost(name, type: .aaaa, profile: profile, inspect: inspect, client: client) { found in
                    self.finish(found, profile: profile, client: client, completion)
                }
            default:
                finish(found, profile: profile, client: client, completion)
            }
        }
    }

    private func finish(
        _ found: ResolvedHost, profile: Profile, client: IPAddress, _ completion: @escaping (LookupResult) -> Void
    ) {
        switch found {
        case .addresses(let addresses): completion(.addresses(addresses))
        case .blocked(let decision): completion(.blocked(BlockReason(decision)))
        // The chain reached a safe-search name: its target, as a DNS client would get it.
        case .rewrite(let target): ask(target, profile: profile, inspect: false, client: client, completion)
        case .noAddress: completion(.noAddress)
        case .notFound: completion(.notFound)
        case .failed: completion(.failed)
        }
    }
}
