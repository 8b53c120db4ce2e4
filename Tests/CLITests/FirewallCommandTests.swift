import Foundation
import TestSupport
import Testing

/// `phosra-gate firewall print` from the real binary (docs/network.md#the-firewall): the
/// configuration's interfaces, listeners, profiles and DoH addresses in the table, and
/// the errors that name what is missing. `apply` and `remove` change the kernel's tables
/// and are tested in a network namespace (FirewallLANTests).
@Suite(.blocking) struct FirewallCommandTests {
    let dir: ScratchDirectory
    let lists = GateRun.checkout.appendingPathComponent("blocklists").path

    init() throws {
        dir = try ScratchDirectory("pg-firewall")
        try dir.write("kid.json", PolicyDocuments.json(blocked: ["reddit.com"]))
    }

    func configuration(_ extra: String = "") throws -> String {
        try dir.write(
            "phosra-gate.conf",
            """
            lan_interfaces = br-lan, wlan0
            dns_listen = 0.0.0.0:53, [::]:5353
            default_profile = none
            \(extra)
            [profile kid]
            clients = 198.51.100.10, 02:00:5e:10:00:0a
            policy = \(dir.path("kid.json"))
            """)
    }

    func firewall(_ words: [String]) throws -> ProgramOutput {
        try GateProcess.run(["firewall"] + words + ["--lists", lists, "--state-dir", dir.path("state")])
    }

    @Test func printShowsTheTableOfTheConfiguration() throws {
        try dir.write("state/lists/doh-addresses.txt", "# downloaded\n203.0.113.77\n")
        let config = try configuration("doh_addresses = 198.51.100.99, 2001:db8:9::/48")
        let output = try firewall(["print", "--config", config])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.isEmpty, "\(output.stderr)")
        let text = output.stdout
        #expect(text.contains("\ttable inet phosra_gate {\n") || text.contains("\ntable inet phosra_gate {\n"))
        #expect(text.contains("iifname != { \"br-lan\", \"wlan0\" } return"))
        #expect(text.contains("th dport 53 fib daddr type != local redirect to :53\n"))
        #expect(text.contains("th dport 53 fib daddr type != local redirect to :5353\n"))
        #expect(text.contains("\t\t\t198.51.100.10\n"))
        #expect(text.contains("\t\t\t02:00:5e:10:00:0a\n"))
        // The built-in list, the state directory's list and the key, merged.
        for address in ["8.8.8.8", "203.0.113.77", "198.51.100.99", "2001:db8:9::/48", "2606:4700:4700::1111"] {
            #expect(text.contains("\t\t\t\(address)"), "\(address)")
        }
        // The page's default ports, open on the LAN and loopback only.
        #expect(text.contains("iifname { \"lo\", \"br-lan\", \"wlan0\" } tcp dport { 8080, 8443 } accept\n"))
        #expect(text.contains("\t\ttcp dport { 8080, 8443 } drop\n"))
        // Printing twice prints the same.
        #expect(try firewall(["print", "--config", config]).stdout == text)
        // What `print` shows is what `nft -c` accepts (it needs root; skipped without nft).
        if let nft = ["/usr/sbin/nft", "/sbin/nft"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
            getuid() == 0
        {
            let check = try Program.run(nft, ["-c", "-f", "-"], stdin: text)
            #expect(check.status == 0, "\(check.stderr)")
        }
    }

    @Test func flagsOverTheFileAsForRun() throws {
        let config = try configuration()
        let output = try firewall(["print", "--config", config, "--lan-interfaces", "eth1", "--dns-listen", "[::]:53"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("iifname != { \"eth1\" } return"))
        // No IPv4 listener: IPv4 DNS goes to the IPv6 listener's port, where nothing
        // listens on IPv4 (closed), and the command says so.
        #expect(output.stderr.contains("warning: dns_listen has no IPv4 address a redirect reaches"))
    }

    @Test func thePagesPortsFollowItsListeners() throws {
        let moved = try firewall([
            "print", "--config", try configuration("web_listen = 192.168.1.1:9443\nweb_http_listen = 192.168.1.1:9080"),
        ])
        #expect(moved.stdout.contains("tcp dport { 9080, 9443 } drop\n"), "\(moved.stdout)")
        let off = try firewall(["print", "--config", try configuration("web_listen =\nweb_http_listen =")])
        #expect(off.status == 0 && !off.stdout.contains("chain input"), "\(off.stdout)")
    }

    @Test func withoutLANInterfacesTheErrorNamesTheKey() throws {
        let unset = try dir.write("unset.conf", "dns_listen = 0.0.0.0:53\n")
        for verb in ["print", "apply"] {
            let output = try firewall([verb, "--config", unset])
            #expect(output.status == 1)
            #expect(output.stderr.hasPrefix("phosra-gate firewall: lan_interfaces is not set: "), "\(output.stderr)")
        }
        let empty = try dir.write("empty.conf", "dns_listen = 0.0.0.0:53\nlan_interfaces =\n")
        let output = try firewall(["print", "--config", empty])
        #expect(output.status == 1)
        #expect(output.stderr.hasPrefix("phosra-gate firewall: \(empty):2: lan_interfaces: is empty: "))
        let bad = try dir.write("bad.conf", "lan_interfaces = br lan\n")
        let badName = try firewall(["print", "--config", bad])
        #expect(badName.status == 1)
        #expect(badName.stderr.contains("\(bad):1: lan_interfaces: \"br lan\" is not an interface name"))
    }

    /// `egress` per profile (the top-level value for the others) and `egress_allow` reach
    /// the table; a bad entry names file, line, key and the wrong part.
    @Test func egressFollowsTheProfilesAndEgressAllow() throws {
        let config = try dir.write(
            "egress.conf",
            """
            lan_interfaces = br-lan
            dns_listen = 0.0.0.0:53
            default_profile = kid
            egress_allow = tcp/993, tcp/22@203.0.113.0/24
            [profile kid]
            clients = 198.51.100.10
            policy = \(dir.path("kid.json"))
            [profile teen]
            clients = 198.51.100.30
            policy = \(dir.path("kid.json"))
            egress = open
            """)
        let output = try firewall(["print", "--config", config])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("\tset egress_open4 {\n\t\ttype ipv4_addr\n\t\tflags interval\n"))
        #expect(output.stdout.contains("\t\t\t198.51.100.30\n"), "teen is open")
        #expect(output.stdout.contains("\t\ttcp dport { 993 } accept\n"))
        #expect(output.stdout.contains("\t\tip daddr 203.0.113.0/24 tcp dport 22 accept\n"))
        // Every profile open: no egress rules at all.
        let open = try firewall(["print", "--config", config, "--egress", "open"])
        #expect(open.status == 0, "\(open.stderr)")
        #expect(!open.stdout.contains("egress"), "\(open.stdout)")
        let bad = try dir.write("bad-egress.conf", "lan_interfaces = br-lan\negress_allow = tcp/993, udp/3481-3478\n")
        let refused = try firewall(["print", "--config", bad])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("\(bad):2: egress_allow: \"3481-3478\": the first port is above the last"),
            "\(refused.stderr)")
    }

    @Test func aListenerOnLoopbackOnlyIsRefused() throws {
        let config = try configuration()
        let output = try firewall(["print", "--config", config, "--dns-listen", "127.0.0.1:5300"])
        #expect(output.status == 1)
        #expect(
            output.stderr.contains("--dns-listen: 127.0.0.1:5300 is loopback only: DNS redirected from the LAN"),
            "\(output.stderr)")
    }

    @Test func aBadDoHListNamesFileAndLine() throws {
        let config = try configuration()
        try dir.write("lists/doh-addresses.txt", "# test\n8.8.8.8\ndns.google\n")
        let output = try GateProcess.run([
            "firewall", "print", "--config", config, "--lists", dir.path("lists"), "--state-dir", dir.path("state"),
        ])
        #expect(output.status == 1)
        #expect(
            output.stderr
                == "phosra-gate firewall: \(dir.path("lists"))/doh-addresses.txt:3: \"dns.google\" is not an IPv4 or "
                + "IPv6 address or CIDR\n")
    }

    @Test func usage() throws {
        let none = try GateProcess.run(["firewall"])
        #expect(none.status == 1)
        #expect(none.stderr.hasPrefix("usage: phosra-gate firewall print"))
        let help = try GateProcess.run(["firewall", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("phosra-gate firewall remove"))
        #expect(help.stdout.contains("phosra-gate firewall watch [--config FILE] [--egress-attempts FILE]"))
        let extra = try GateProcess.run(["firewall", "print", "now"])
        #expect(extra.status == 1)
        #expect(extra.stderr.hasPrefix("phosra-gate firewall: unexpected \"now\""))
        #expect(try GateProcess.run(["help"]).stdout.contains(/\n  firewall +print \| apply \| watch \| remove/))
    }
}
