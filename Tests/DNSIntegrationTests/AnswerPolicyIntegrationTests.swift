import Foundation
import TestSupport
import Testing

/// What the policy does to forwarded answers, against a real dnsmasq upstream: safe-search
/// rewrites (docs/dns.md#safe-search-rewrites), CNAME inspection (docs/dns.md#answer-inspection) and cutoff windows with the TTL cap at the
/// next boundary (docs/decisions.md#time-rules).
@Suite(.serialized, .blocking) struct AnswerPolicyIntegrationTests {
    let fixture: UpstreamFixture

    init() throws { fixture = try UpstreamFixture() }

    /// Only the safe-search targets exist upstream (`--local` makes the rest of those zones
    /// NXDOMAIN rather than REFUSED), so an answer for the original name cannot sneak in.
    private func safeSearchUpstream() throws -> DnsmasqUpstream {
        try DnsmasqUpstream(
            [
                "--local=/google.com/", "--local=/youtube.com/",
                "--host-record=forcesafesearch.google.com,192.0.2.11",
                "--host-record=restrict.youtube.com,192.0.2.12",
                "--host-record=restrictmoderate.youtube.com,192.0.2.13",
                "--host-record=www.google.com,192.0.2.66", "--host-record=youtube.com,192.0.2.67",
            ],
            localTTL: 3600)
    }

    @Test func safeSearchAnswersACNAMEChainToTheTargetsAddress() throws {
        let upstream = try safeSearchUpstream()
        let gate = try fixture.start(PolicyDocuments.json(level: "strict", safeSearch: true), upstream: upstream.spec)

        let google = try gate.dig("www.google.com")
        #expect(google.status == "NOERROR", "\(google)")
        #expect(google.answers.count == 2)
        #expect(google.answers.first?.hasPrefix("www.google.com.") == true)
        #expect(google.answers.first?.contains("CNAME") == true)
        #expect(google.answerData == ["forcesafesearch.google.com.", "192.0.2.11"])
        #expect(google.answerTTLs == [300, 3600], "CNAME: the target's TTL capped at 300 s")
        #expect(google.extendedErrors.isEmpty, "a rewrite is not a block")

        let youtube = try gate.dig("youtube.com")
        #expect(youtube.status == "NOERROR", "\(youtube)")
        #expect(youtube.answerData == ["restrict.youtube.com.", "192.0.2.12"], "level strict")
        #expect(youtube.extendedErrors.isEmpty)

        let https = try gate.dig("www.google.com", "HTTPS")
        #expect(https.status == "NOERROR", "\(https)")
        #expect(https.answers.isEmpty, "HTTPS for a rewritten name: NODATA")
        #expect(https.extendedErrors.isEmpty)

        // forcesafesearch.google.com has no AAAA upstream (NODATA): the CNAME alone.
        let aaaa = try gate.dig("www.google.com", "AAAA")
        #expect(aaaa.status == "NOERROR", "\(aaaa)")
        #expect(aaaa.answerData == ["forcesafesearch.google.com."])
        #expect(aaaa.answerTTLs == [300])

        // Asked again: the target's answer comes from the cache.
        #expect(try gate.dig("www.google.com").answerData == ["forcesafesearch.google.com.", "192.0.2.11"])
        let queries = try upstream.settledQueries()
        let asked = Set(queries.map(\.name))
        #expect(
            asked == ["forcesafesearch.google.com", "restrict.youtube.com"],
            "only the targets went upstream: \(queries)")
        #expect(queries.filter { $0.name == "forcesafesearch.google.com" && $0.type == "A" }.count == 1)
    }

    @Test func safeSearchForYouTubeBelowStrictIsModerate() throws {
        let upstream = try safeSearchUpstream()
        let gate = try fixture.start(PolicyDocuments.json(level: "moderate", safeSearch: true), upstream: upstream.spec)
        #expect(try gate.dig("www.youtube.com").answerData == ["restrictmoderate.youtube.com.", "192.0.2.13"])
        // Safe search off: the names are forwarded as they are.
        let off = try fixture.start(PolicyDocuments.json(level: "moderate", safeSearch: false), upstream: upstream.spec)
        #expect(try off.dig("www.google.com").answerData == ["192.0.2.66"])
        #expect(try off.dig("youtube.com").answerData == ["192.0.2.67"])
    }

    @Test func aSafeSearchRewriteIsServedStaleWhenTheUpstreamWasKilled() throws {
        let upstream = try DnsmasqUpstream(
            ["--local=/google.com/", "--host-record=forcesafesearch.google.com,192.0.2.11"],
            localTTL: 1)
        let gate = try fixture.start(PolicyDocuments.json(safeSearch: true), upstream: upstream.spec)
        let fresh = try gate.dig("www.google.com")
        #expect(fresh.answerData == ["forcesafesearch.google.com.", "192.0.2.11"], "\(fresh)")
        #expect(fresh.answerTTLs == [1, 1])
        upstream.kill()

        // From the cache until the TTL of 1 s has passed on the daemon's clock; then stale.
        let (stale, seconds) = try #require(
            try waitForTimedAnswer(gate, "www.google.com") { !$0.extendedErrors.isEmpty },
            "a stale answer once the TTL has passed")
        #expect(stale.status == "NOERROR", "\(stale)")
        #expect(stale.answerData == ["forcesafesearch.google.com.", "192.0.2.11"])
        #expect(seconds < 2.0)
        #expect(stale.answerTTLs == [30, 30], "RFC 8767's stale TTL: \(stale)")
        #expect(stale.extendedErrors == ["3 (Stale Answer)"], "\(stale)")
    }

    @Test func aCNAMEChainReachingABlockedNameIsReplacedByTheBlockAnswer() throws {
        let upstream = try DnsmasqUpstream([
            "--host-record=cdn.adult.example,192.0.2.66", "--cname=innocent.example.test,cdn.adult.example",
            "--cname=hop1.example.test,hop2.example.test", "--cname=hop2.example.test,cdn.adult.example",
            "--host-record=tracker.parentblocked.example,192.0.2.67",
            "--cname=other.example.test,tracker.parentblocked.example",
            "--cname=allowed.example.test,cdn.adult.example",
            "--host-record=cdn.clean.example,192.0.2.70", "--cname=clean.example.test,cdn.clean.example",
            "--host-record=forcesafesearch.google.com,192.0.2.11", "--host-record=www.google.com,192.0.2.68",
            "--cname=search.example.test,www.google.com",
        ])
        let policy = PolicyDocuments.json(
            level: "light", safeSearch: true, blocked: ["parentblocked.example"],
            allowed: ["allowed.example.test"])
        let gate = try fixture.start(policy, upstream: upstream.spec)

        for (name, reason) in [
            ("innocent.example.test", "category:adult"), ("hop1.example.test", "category:adult"),
            ("other.example.test", "blocked_domain:parentblocked.example"),
        ] {
            let answer = try gate.dig(name)
            #expect(answer.status == "NXDOMAIN", "\(name): \(answer)")
            #expect(answer.answers.isEmpty, "\(name)")
            #expect(answer.extendedErrors == ["15 (Blocked): (\(reason))"], "\(name)")
            #expect(answer.authority.first?.contains("SOA") == true, "\(name)")
            #expect(
                answer.authority.first.map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1] } == "10",
                "block_ttl: \(answer.authority)")
        }
        // From the cache too, and over TCP.
        #expect(
            try gate.dig("innocent.example.test", "A", ["+tcp"]).extendedErrors == ["15 (Blocked): (category:adult)"])

        // The parent allowed this name: its answer is not inspected.
        let allowed = try gate.dig("allowed.example.test")
        #expect(allowed.status == "NOERROR", "\(allowed)")
        #expect(allowed.answerData == ["cdn.adult.example.", "192.0.2.66"])
        #expect(allowed.extendedErrors.isEmpty)

        // A chain to nothing listed passes as it came.
        #expect(try gate.dig("clean.example.test").answerData == ["cdn.clean.example.", "192.0.2.70"])

        // A chain reaching a safe-search name is rewritten.
        let search = try gate.dig("search.example.test")
        #expect(search.status == "NOERROR", "\(search)")
        #expect(search.answerData == ["forcesafesearch.google.com.", "192.0.2.11"])
        #expect(search.answers.first?.hasPrefix("search.example.test.") == true)
    }

    @Test func aDowntimeWindowAroundNowBlocksAllButTheAllowedNames() throws {
        let upstream = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"])
        let policy = PolicyDocuments.json(
            allowed: ["parent-allowed.example.test"],
            screenTime: PolicyDocuments.downtime("11:57", "12:03"))
        let gate = try fixture.start(
            policy, upstream: upstream.spec,
            ["--always-allow", "school.example.test", "--downtime-allow", "homework.example.test"],
            wallClock: PolicyDocuments.noon)

        let blocked = try gate.dig("www.example.test")
        #expect(blocked.status == "NXDOMAIN", "\(blocked)")
        #expect(blocked.extendedErrors == ["15 (Blocked): (downtime)"])
        let parentAllowed = try gate.dig("parent-allowed.example.test")
        #expect(parentAllowed.extendedErrors == ["15 (Blocked): (downtime)"], "parent allows do not lift a cutoff")

        let school = try gate.dig("school.example.test")
        #expect(school.status == "NOERROR", "\(school)")
        #expect(school.answerData == ["192.0.2.1"], "always_allow")
        let homework = try gate.dig("www.homework.example.test")
        #expect(homework.answerData == ["192.0.2.1"], "downtime_allow: \(homework)")

        let queries = try upstream.settledQueries()
        #expect(
            Set(queries.map(\.name)) == ["school.example.test", "www.homework.example.test"],
            "blocked names never went upstream: \(queries)")
    }

    @Test func aCachedAnswersTTLIsCappedAtTheNextCutoff() throws {
        let upstream = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"], localTTL: 3600)
        #expect(
            try Dig.query("www.example.test", port: upstream.port).answerTTLs == [3600],
            "the premise: TTL 3600 upstream")
        // The daemon starts at noon; the window two minutes later.
        let policy = PolicyDocuments.json(screenTime: PolicyDocuments.downtime("12:02", "12:07"))
        let gate = try fixture.start(policy, upstream: upstream.spec, wallClock: PolicyDocuments.noon)

        let first = try gate.dig("www.example.test")
        #expect(first.status == "NOERROR", "\(first)")
        #expect(first.answerData == ["192.0.2.1"])
        let firstTTL = try #require(first.answerTTLs.first)
        #expect(firstTTL > 100 && firstTTL <= 120, "capped at the downtime start: \(firstTTL)")

        let cached = try #require(
            try waitForAnswer(gate, "www.example.test") { ($0.answerTTLs.first ?? 0) < firstTTL },
            "the cached TTL counts down")
        let cachedTTL = try #require(cached.answerTTLs.first)
        #expect(cachedTTL > 0 && cachedTTL <= 120 && cachedTTL < firstTTL, "from the cache, still capped: \(cachedTTL)")
        #expect(
            try upstream.settledQueries(for: "www.example.test").count == 2,
            "the premise query and one from phosra-gate")
    }
}
