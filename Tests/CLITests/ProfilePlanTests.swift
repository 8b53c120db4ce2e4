import Config
import Policy
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// `[profile NAME]` sections: what a configuration must say and the errors that name
/// file, line and key when it does not.
@Suite(.blocking) struct ProfilePlanTests {
    func plan(_ text: String, registered: [String] = []) throws -> ProfilePlan {
        try ProfilePlan.from(ConfigFile.parse(text, path: "x.conf", schema: Key.schema), registered: registered)
    }

    func problem(_ text: String) -> String {
        do {
            _ = try plan(text)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    @Test func aFamily() throws {
        let plan = try plan(
            """
            default_profile = none
            policy = /etc/phosra-gate/kids.json
            [profile alice]
            clients = 192.168.1.20, aa:bb:cc:dd:ee:01
            initial_policy = none
            [profile bob]
            clients = 192.168.1.0/24
            proxy_user = bob
            policy = /etc/phosra-gate/bob.json
            """)
        #expect(plan.configured)
        #expect(plan.roster.defaultProfile == "none")
        #expect(plan.roster.members.map(\.name) == ["alice", "bob"])
        #expect(plan.roster.members[0].clients.map(\.description) == ["192.168.1.20", "aa:bb:cc:dd:ee:01"])
        #expect(plan.roster.members[1].proxyUser == "bob")
        #expect(plan.sources.map(\.policyPath) == ["/etc/phosra-gate/kids.json", "/etc/phosra-gate/bob.json"])
        #expect(plan.sources.map(\.initialPolicy) == [.none, .strict])
    }

    @Test func withoutSectionsOneProfileCoversEveryone() throws {
        #expect(try plan("").roster == .single("default"))
        #expect(try plan("", registered: ["kid", "alice"]).roster == .single("alice"))
        let local = try plan("policy = p.json", registered: ["kid"])
        #expect(local.roster == .single("default"))
        #expect(local.sources.first?.policyPath == "p.json")
        #expect(!local.configured)
    }

    @Test func oneProfileWithoutClientsNeedsNoDefault() throws {
        #expect(try plan("[profile kid]\npolicy = k.json").roster.defaultProfile == "kid")
    }

    @Test(arguments: [
        (
            "[profile a]\nclients = 10.0.0.1",
            "x.conf: default_profile: must be set when profiles list clients or proxy users: a profile name, or none"
        ),
        (
            "default_profile = c\n[profile a]\n[profile b]",
            "x.conf:1: default_profile: \"c\" is not a profile (a, b, or none)"
        ),
        (
            "default_profile = a\n[profile a]\nclients = 10.0.0.1\n[profile b]\nclients = 10.0.0.2, 10.0.0.1",
            "x.conf:5: clients: 10.0.0.1 is in profiles a and b"
        ),
        (
            "default_profile = a\n[profile a]\nclients = AA:BB:CC:DD:EE:FF\n[profile b]\nclients = aa:bb:cc:dd:ee:ff",
            "x.conf:5: clients: aa:bb:cc:dd:ee:ff is in profiles a and b"
        ),
        (
            "default_profile = a\n[profile a]\nproxy_user = kid\n[profile b]\nproxy_user = kid",
            "x.conf:5: proxy_user: kid is the proxy user of profiles a and b"
        ),
        (
            "[profile a]\nclients = alice-phone",
            "x.conf:2: clients: \"alice-phone\" is not an IP address, a CIDR or a MAC address (aa:bb:cc:dd:ee:ff)"
        ),
        ("[profile a.b]", "x.conf:1: profile name \"a.b\" may hold only letters, digits, - and _"),
        ("[profile none]", "x.conf:1: \"none\" is the unfiltered profile's name; choose another"),
        (
            "web_allow_clients = 10.0.0.1, parent\n[profile kid]",
            "x.conf:1: web_allow_clients: \"parent\" is not an address, a CIDR, a MAC address or a profile (kid)"
        ),
        (
            "web_allow_clients = 10.0.0.300",
            "x.conf:1: web_allow_clients: \"10.0.0.300\" is not an IP address, a CIDR, a MAC address "
                + "(aa:bb:cc:dd:ee:ff) or a profile name"
        ),
    ])
    func mistakesAreNamed(text: String, message: String) {
        // A key that is missing has no line: the error names the file.
        #expect(problem(text) == message)
    }

    @Test func atMost64Profiles() {
        let text = (0...64).map { "[profile p\($0)]" }.joined(separator: "\n")
        #expect(problem(text) == "x.conf:65: more than 64 profiles")
    }
}
