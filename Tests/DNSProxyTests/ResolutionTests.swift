import DNSWire
import DomainMatch
import Policy
import TestSupport
import Testing

@testable import DNSProxy

/// What happens after the upstream: caching, inspection, rewrites, serve-stale.
@Suite(.blocking) struct ResolutionTests {
    typealias F = PipelineFixture

    static func later(_ seconds: Int64) -> Now {
        Now(
            monotonicMilliseconds: F.noon.monotonicMilliseconds + seconds * 1000,
            unixSeconds: F.noon.unixSeconds + seconds)
    }

    @Test func anAllowedNameIsForwardedCachedAndServedFromTheCache() throws {
        let fixture = F()
        let pending = try #require(fixture.receive(F.query("WwW.Example.org", id: 1)).pending)
        #expect(pending.upstreamQuestion.name.description == "www.example.org")
        let first = try #require(
            fixture.pipeline.complete(
                pending,
                reply: F.reply(
                    to: pending,
                    answers: [
                        F.a("www.example.org", 0xC000_0201, ttl: 120)
                    ]), now: F.noon
            ).replyMessage)
        #expect(first.header.id == 1)
        #expect(first.answers.map(\.ttl) == [120])
        #expect(first.edns != nil)

        let second = try #require(fixture.receive(F.query("WWW.EXAMPLE.ORG", id: 2), now: Self.later(20)).replyMessage)
        #expect(second.header.id == 2)
        #expect(
            second.questions.first?.name.wire == (try DNSName("WWW.EXAMPLE.ORG")).wire, "the client's own letter case")
        #expect(second.answers.map(\.ttl) == [100], "aged by 20 s")
        #expect(fixture.pipeline.cache.count == 1)
    }

    @Test func negativeAnswersAreCachedBySOAAndClamped() throws {
        let fixture = F()
        let pending = try #require(fixture.receive(F.query("missing.example.org")).pending)
        let soa = ResourceRecord(
            name: try DNSName("example.org"), ttl: 900,
            rdata: .soa(
                .init(
                    mname: try DNSName("ns.example.org"), rname: try DNSName("h.example.org"),
                    serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 60)))
        let reply = try #require(
            fixture.pipeline.complete(
                pending,
                reply: F.reply(
                    to: pending, answers: [], rcode: .nxDomain,
                    authority: [soa]), now: F.noon
            ).replyMessage)
        #expect(reply.rcode == .nxDomain)
        #expect(fixture.receive(F.query("missing.example.org"), now: Self.later(59)).replyMessage?.rcode == .nxDomain)
        #expect(
            fixture.receive(F.query("missing.example.org"), now: Self.later(61)).pending?.stale != nil,
            "expired after 60 s")
        let noSOA = try #require(fixture.receive(F.query("other.example.org")).pending)
        _ = fixture.pipeline.complete(noSOA, reply: F.reply(to: noSOA, answers: [], rcode: .nxDomain), now: F.noon)
        #expect(fixture.receive(F.query("other.example.org")).pending?.stale == nil, "not cached without an SOA")
    }

    @Test func aCNAMEChainToABlockedNameIsBlocked() throws {
        var policy = CompiledPolicy()
        policy.webFilter.level = "strict"
        policy.webFilter.allowedDomains = ["allowed.example"]
        let fixture = F(policy: policy)
        let pending = try #require(fixture.receive(F.query("cdn.example.org")).pending)
        let reply = F.reply(
            to: pending,
            answers: [
                F.cname("cdn.example.org", "edge.example.net"),
                F.cname("edge.example.net", "x.adult.example"), F.a("x.adult.example", 0xC000_0201),
            ])
        let answer = try #require(fixture.pipeline.complete(pending, reply: reply, now: F.noon).replyMessage)
        #expect(answer.rcode == .nxDomain)
        #expect(answer.extendedErrorTexts == ["category:adult"])
        #expect(
            fixture.hits.all.map { "\($0.name) \($0.rule ?? "") \($0.reasonText)" } == [
                "cdn.example.org x.adult.example category:adult"
            ])
        // From the cache too: the decision is made per query.
        #expect(fixture.receive(F.query("cdn.example.org")).replyMessage?.rcode == .nxDomain)

        let allowed = try #require(fixture.receive(F.query("allowed.example")).pending)
        let passed = fixture.pipeline.complete(
            allowed,
            reply: F.reply(
                to: allowed,
                answers: [
                    F.cname("allowed.example", "x.adult.example"), F.a("x.adult.example", 0xC000_0201),
                ]), now: F.noon
        ).replyMessage
        #expect(passed?.rcode == .noError && passed?.answers.count == 2, "parent-allowed names are not inspected")
    }

    @Test func aCNAMEChainToASafeSearchNameIsRewritten() throws {
        var policy = CompiledPolicy()
        policy.webFilter.safeSearch = true
        let fixture = F(policy: policy)
        let pending = try #require(fixture.receive(F.query("search.example.org")).pending)
        let step = fixture.pipeline.complete(
            pending,
            reply: F.reply(
                to: pending,
                answers: [
                    F.cname("search.example.org", "www.google.com"), F.a("www.google.com", 0xC000_0205),
                ]), now: F.noon)
        let rewrite = try #require(step.pending)
        #expect(rewrite.upstreamQuestion.name.description == "forcesafesearch.google.com")
        let answer = try #require(
            fixture.pipeline.complete(
                rewrite,
                reply: F.reply(
                    to: rewrite,
                    answers: [
                        F.a("forcesafesearch.google.com", 0xD8EF_2678, ttl: 900)
                    ]), now: F.noon
            ).replyMessage)
        #expect(
            answer.answers.map { "\($0.name) \($0.ttl) \($0.rdata)" } == [
                "search.example.org 300 forcesafesearch.google.com", "forcesafesearch.google.com 900 216.239.38.120",
            ])
    }

    @Test func safeSearchRewrites() throws {
        var policy = CompiledPolicy()
        policy.webFilter.safeSearch = true
        policy.webFilter.level = "strict"
        let fixture = F(policy: policy)
        let pending = try #require(fixture.receive(F.query("www.youtube.com", .aaaa)).pending)
        #expect(pending.upstreamQuestion.description == "restrict.youtube.com IN AAAA")
        let noAAAA = try #require(
            fixture.pipeline.complete(pending, reply: F.reply(to: pending, answers: []), now: F.noon).replyMessage)
        #expect(
            noAAAA.answers.map { "\($0.rdata)" } == ["restrict.youtube.com"],
            "a target with no AAAA gives the CNAME alone")
        let https = try #require(fixture.receive(F.query("www.google.com", .https)).replyMessage)
        #expect(https.rcode == .noError && https.answers.isEmpty, "HTTPS for a rewritten name is NODATA")
        let mx = try #require(fixture.receive(F.query("bing.com", .mx)).replyMessage)
        #expect(mx.answers.map { "\($0.ttl) \($0.rdata)" } == ["300 strict.bing.com"])
        #expect(fixture.hits.all.isEmpty, "rewrites are not hits")
    }

    @Test func serveStaleWhenTheUpstreamIsSlowOrDead() throws {
        let fixture = F()
        let pending = try #require(fixture.receive(F.query("example.org")).pending)
        _ = fixture.pipeline.complete(
            pending, reply: F.reply(to: pending, answers: [F.a("example.org", 0xC000_0201, ttl: 60)]), now: F.noon)
        let expired = try #require(fixture.receive(F.query("example.org"), now: Self.later(120)).pending)
        #expect(expired.stale != nil)
        let stale = try #require(fixture.pipeline.staleAnswer(expired, now: Self.later(122))?.replyMessage)
        #expect(stale.answers.map(\.ttl) == [30])
        #expect(((try? stale.edns?.extendedErrors()) ?? []).map(\.code) == [.staleAnswer])
        let failed = try #require(fixture.pipeline.complete(expired, reply: nil, now: Self.later(122)).replyMessage)
        #expect(failed.answers.map(\.ttl) == [30], "every upstream failed: the stale copy")
        let fresh = try #require(fixture.receive(F.query("fresh.example.org")).pending)
        #expect(fixture.pipeline.staleAnswer(fresh, now: F.noon) == nil)
        #expect(fixture.pipeline.complete(fresh, reply: nil, now: F.noon).replyMessage?.rcode == .servFail)
        let tooOld = Now(monotonicMilliseconds: F.noon.monotonicMilliseconds + 60_000 + 86_400_000 + 1, unixSeconds: 0)
        #expect(fixture.receive(F.query("example.org"), now: tooOld).pending?.stale == nil, "past serve_stale_max")
    }

    @Test func echIsRemovedForFilteredClientsOnly() throws {
        for unfiltered in [false, true] {
            let fixture = F(unfiltered: unfiltered)
            let pending = try #require(fixture.receive(F.query("example.org", .https)).pending)
            let svcb = try RData.SVCB(
                priority: 1, target: .root,
                params: [
                    (key: .alpn, value: [2, 0x68, 0x32]),
                    (key: .ech, value: [1, 2, 3, 4]),
                ])
            let record = ResourceRecord(name: try DNSName("example.org"), ttl: 300, rdata: .https(svcb))
            let answer = try #require(
                fixture.pipeline.complete(
                    pending, reply: F.reply(to: pending, answers: [record]),
                    now: F.noon
                ).replyMessage)
            let keys = answer.answers.first?.rdata.svcb.map { Array($0.params.map(\.key)) }
            #expect(keys == (unfiltered ? [.alpn, .ech] : [.alpn]))
        }
    }

    @Test func cachedTTLsAreCappedAtTheNextCutoff() throws {
        var policy = CompiledPolicy()
        policy.screenTime.downtimeWindows = [.init(startTime: "12:10", endTime: "13:00")]
        let fixture = F(policy: policy)
        let pending = try #require(fixture.receive(F.query("example.org")).pending)
        let answer = try #require(
            fixture.pipeline.complete(
                pending,
                reply: F.reply(
                    to: pending,
                    answers: [
                        F.a("example.org", 0xC000_0201, ttl: 3600)
                    ]), now: F.noon
            ).replyMessage)
        #expect(answer.answers.map(\.ttl) == [600], "downtime begins in ten minutes")
        #expect(
            fixture.receive(F.query("example.org"), now: Self.later(600)).replyMessage?.extendedErrorTexts == [
                "downtime"
            ])
    }

    @Test func truncatedAndFailedRepliesAreNotCached() throws {
        let fixture = F()
        let pending = try #require(fixture.receive(F.query("example.org")).pending)
        var truncated = F.reply(to: pending, answers: [F.a("example.org", 0xC000_0201)])
        truncated[2] |= 0x02
        #expect(fixture.pipeline.complete(pending, reply: truncated, now: F.noon).replyMessage?.rcode == .servFail)
        #expect(fixture.pipeline.cache.count == 0)
    }
}

extension ResolutionTests {
    @Test func aStaleRewriteTargetIsServedAsStale() throws {
        var policy = CompiledPolicy()
        policy.webFilter.safeSearch = true
        let fixture = F(policy: policy)
        let pending = try #require(fixture.receive(F.query("www.google.com")).pending)
        _ = fixture.pipeline.complete(
            pending,
            reply: F.reply(
                to: pending,
                answers: [
                    F.a("forcesafesearch.google.com", 0xC000_0201, ttl: 60)
                ]), now: F.noon)
        let expired = try #require(fixture.receive(F.query("www.google.com"), now: Self.later(120)).pending)
        let stale = try #require(fixture.pipeline.complete(expired, reply: nil, now: Self.later(121)).replyMessage)
        #expect(stale.answers.map(\.ttl) == [30, 30])
        #expect(((try? stale.edns?.extendedErrors()) ?? []).map(\.code) == [.staleAnswer])
    }
}
