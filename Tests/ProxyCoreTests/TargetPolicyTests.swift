import DomainMatch
import Policy
import Testing

@testable import ProxyCore

@Suite struct TargetPolicyTests {
    private func connect(_ text: String) -> ProxyTarget { try! ProxyTarget.connect(text) }

    @Test func portsOutsideConnectPortsAreRefused() {
        let fixture = ProxyFixture()
        #expect(
            fixture.policy().verdict(connect("example.org:22"), isConnect: true)
                == .refuse(BlockReason(Decision(.block, .port, rule: "22"))))
        if case .refuse(let block) = fixture.policy().verdict(connect("example.org:22"), isConnect: true) {
            #expect(block.text == "port")
        }
        // Plain HTTP goes to any port.
        #expect(
            fixture.policy().verdict(try! ProxyTarget.absolute("http://example.org:22/"), isConnect: false)
                == .resolve(try! QueryName.parse("example.org"), Decision(.allow, .default)))
    }

    @Test func ipLiteralsAreRefusedUnlessAllowed() {
        var fixture = ProxyFixture(policy: ProxyFixture.policy(blocked: ["10.0.0.66", "2001:db8::66"]))
        guard case .refuse(let block) = fixture.policy().verdict(connect("10.0.0.1:443"), isConnect: true) else {
            Issue.record("an IP literal must be refused by default")
            return
        }
        #expect(block.text == "ip_literal")
        fixture.settings.allowIPConnect = true
        #expect(
            fixture.policy().verdict(connect("10.0.0.1:443"), isConnect: true)
                == .address(IPAddress("10.0.0.1")!, Decision(.allow, .default)))
        guard case .refuse(let entry) = fixture.policy().verdict(connect("10.0.0.66:443"), isConnect: true) else {
            Issue.record("a blocked IP entry is refused even when IP literals are allowed")
            return
        }
        #expect(entry.text == "ip_literal")
        #expect(
            fixture.policy().verdict(connect("[2001:db8::1]:443"), isConnect: true)
                == .address(IPAddress("2001:db8::1")!, Decision(.allow, .default)))
        guard case .refuse(let v6) = fixture.policy().verdict(connect("[2001:DB8:0::66]:443"), isConnect: true) else {
            Issue.record("a blocked IPv6 entry is refused too, however the literal is spelled")
            return
        }
        #expect(v6.text == "ip_literal")
    }

    @Test func ipLiteralsAreRefusedInACutoffEvenWhenAllowed() {
        var fixture = ProxyFixture(policy: ProxyFixture.policy(downtime: ("11:00", "13:00")))
        fixture.settings.allowIPConnect = true
        guard case .refuse(let block) = fixture.policy().verdict(connect("10.0.0.1:443"), isConnect: true) else {
            Issue.record("refused in downtime")
            return
        }
        #expect(block.text == "ip_literal")
        guard case .refuse = fixture.policy().verdict(connect("[2001:db8::1]:443"), isConnect: true) else {
            Issue.record("IPv6 refused in downtime too")
            return
        }
    }

    @Test func theEnginesDecisionOnNames() {
        let fixture = ProxyFixture()
        let policy = fixture.policy()
        #expect(
            policy.verdict(connect("www.reddit.com:443"), isConnect: true)
                == .refuse(BlockReason(Decision(.block, .blockedDomain, rule: "reddit.com"))))
        #expect(
            policy.verdict(connect("x.adult.example:443"), isConnect: true)
                == .refuse(BlockReason(Decision(.block, .category, rule: "adult.example", category: .adult))))
        #expect(
            policy.verdict(connect("www.google.com:443"), isConnect: true)
                == .resolve(
                    try! QueryName.parse("forcesafesearch.google.com"),
                    Decision(.rewrite, .safeSearch, target: try! QueryName.parse("forcesafesearch.google.com"))))
    }

    @Test func downtimeBlocksEveryName() {
        let fixture = ProxyFixture(policy: ProxyFixture.policy(downtime: ("11:30", "12:30")))
        #expect(
            fixture.policy().verdict(connect("example.org:443"), isConnect: true)
                == .refuse(BlockReason(Decision(.block, .downtime))))
        #expect(
            fixture.policy(wallClock: ProxyFixture.noon + 3600).verdict(connect("example.org:443"), isConnect: true)
                == .resolve(try! QueryName.parse("example.org"), Decision(.allow, .default)))
    }
}
