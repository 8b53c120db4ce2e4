import DNSProxy
import DNSWire
import DomainMatch
import ProxyCore

/// Looks a host up for the proxy on one loop: an A query through the loop's lookup
/// `QueryDriver`, and AAAA when A gives no address (docs/proxy.md#connect). The completion runs on
/// the loop thread, exactly once, possibly before `lookup` returns (a cached answer).
final class ProxyResolver {
    let driver: QueryDriver

    init(driver: QueryDriver) {
        self.driver = driver
    }

    func lookup(_ name: DomainName, client: IPAddress, completion: @escaping (LookupResult) -> Void) {
        ask(name, .a, client) { [self] result in
            guard result == .noAddress else { return completion(result) }
            ask(name, .aaaa, client, completion)
        }
    }

    private func ask(
        _ name: DomainName, _ type: DNSType, _ client: IPAddress,
        _ completion: @escaping (LookupResult) -> Void
    ) {
        guard let packet = NameLookup.query(name, type: type) else { return completion(.failed) }
        driver.handle(packet, from: client, overUDP: false) { reply in completion(NameLookup.interpret(reply)) }
    }
}
