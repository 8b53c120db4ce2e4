/// The proxy auto-config file (docs/proxy.md#the-pac-file): a direct `GET /proxy.pac` or `GET /wpad.dat`
/// sends everything to this proxy, at the address the request arrived on (so one file
/// works on every interface), with no DIRECT fallback: a device must not slip past the
/// filter when the proxy is down.
public enum PAC {
    public static let paths: Set<String> = ["/proxy.pac", "/wpad.dat"]
    public static let contentType = "application/x-ns-proxy-autoconfig"

    /// The script for a proxy reached at `address`.
    public static func script(for address: Endpoint) -> String {
        "function FindProxyForURL(url, host) { return \"PROXY \(address)\"; }\n"
    }

    /// Whether an origin-form target asks for the PAC file (a query string is ignored).
    public static func isPACPath(_ target: String) -> Bool {
        paths.contains(String(target.prefix { $0 != "?" }))
    }
}
