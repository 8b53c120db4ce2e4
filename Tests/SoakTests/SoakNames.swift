/// The names the load asks for and the two devices it asks as. Only names whose answer
/// is the same under both alternating local policies are checked at any moment; the two
/// that alternate are checked only once a swap has settled.
enum SoakNames {
    /// The device of profile `local` (a policy file swapped every few seconds).
    static let localClient = "127.0.0.1"
    /// The device of profile `synced` (registered with the fake API; its hits are counted).
    static let syncedClient = "127.0.0.2"

    /// Blocked by the synced profile's policy and asked for only by the soak, only from
    /// `syncedClient`: every block answer the load receives for it is a hit the gateway
    /// must deliver to the API or still hold in its queue.
    static let hit = "soak-hit.test"
    /// Blocked by both local policies (a listed domain, a subdomain of it, a category).
    static let localBlocked = ["always.blocked.test", "www.always.blocked.test", "adult.example"]
    /// Blocked by the API's policy whatever its version.
    static let syncedBlocked = ["always.blocked.test", "www.always.blocked.test"]
    /// Allowed everywhere, with the address the upstream gives.
    static let allowed = [("origin.test", "127.0.0.1"), ("news.test", "127.0.0.1")]
    /// Any `<label>.wild.test` resolves to this (dnsmasq's `--address`), so the cache keeps
    /// meeting new names and must evict.
    static let wildAddress = "127.0.0.9"
    /// Blocked by policy A only, and by policy B only.
    static let swapA = "swap-a.test"
    static let swapB = "swap-b.test"
    /// Blocked by the API's policy in alternate versions (churn for the sync; not checked).
    static let apiSwap = ["api-swap-a.test", "api-swap-b.test"]

    static func wild(_ number: Int) -> String { "n\(number).wild.test" }

    /// The upstream's records: every name resolves (A and AAAA: dnsmasq refuses a type it
    /// has no record of), so only the policy can stop one.
    static var upstreamRecords: [String] {
        ([hit, swapA, swapB, "adult.example", "always.blocked.test", "www.always.blocked.test"] + apiSwap).map {
            "--host-record=\($0),127.0.0.1,::1"
        } + allowed.map { "--host-record=\($0.0),\($0.1),::1" }
            + ["--address=/wild.test/\(wildAddress)", "--address=/wild.test/::9"]
    }
}
