import DomainMatch
import Testing
import Zoneinfo

@testable import Policy

/// Apps as network services in the decision order (docs/decisions.md#the-decision-order,
/// steps 2 and 3b): blocked apps, the kinds `dm_restriction` and `multiplayer_mode` turn
/// off, and always-allowed apps through cutoffs.
@Suite struct ServiceDecisionTests {
    static let catalogue = """
        {"format": 1, "services": [
          {"id": "tiktok", "name": "TikTok", "kind": "social",
           "bundle_ids": {"ios": ["com.zhiliaoapp.musically"], "android": ["com.ss.android.ugc.trill"]},
           "domains": ["tiktok.com", "tiktokcdn.com", "tiktokv.com"], "source": "test"},
          {"id": "youtube", "name": "YouTube", "kind": "video",
           "bundle_ids": {"ios": ["com.google.ios.youtube"]},
           "domains": ["youtube.com", "ytimg.com", "youtubei.googleapis.com"], "source": "test"},
          {"id": "whatsapp", "name": "WhatsApp", "kind": "messaging",
           "bundle_ids": {"ios": ["net.whatsapp.WhatsApp"], "android": ["com.whatsapp"]},
           "domains": ["whatsapp.com", "whatsapp.net"], "source": "test"},
          {"id": "roblox", "name": "Roblox", "kind": "multiplayer",
           "bundle_ids": {"ios": ["com.roblox.robloxmobile"]},
           "domains": ["roblox.com", "rbxcdn.com"], "source": "test"},
          {"id": "apple-maps", "name": "Apple Maps", "kind": "video",
           "bundle_ids": {"ios": ["com.apple.Maps"]},
           "domains": ["maps.apple.com", "ls.apple.com"], "source": "test"}
        ]}
        """

    static func engine(_ policy: CompiledPolicy) throws -> (DecisionEngine<SetMatcher>, PolicyRules) {
        let services = try ServiceCatalogue.decode(Array(catalogue.utf8))
        let rules = PolicyRules(policy)
        let engine = DecisionEngine(
            system: SystemRules(DecisionOptions()), categories: CategorySet(lists: [:]), zone: .utc,
            profiles: ProfileTable(single: rules), services: services)
        return (engine, rules)
    }

    static func policy(
        blockedApps: [String] = [], allowed: [String] = [], dm: String = "", multiplayer: String = "",
        alwaysAllowed: [String] = [], windows: [CompiledPolicy.DowntimeWindow] = []
    ) -> CompiledPolicy {
        var policy = Fixture.policy(allowed: allowed, windows: windows)
        policy.contentFilter.blockedApps = blockedApps
        policy.social.dmRestriction = dm
        policy.social.multiplayerMode = multiplayer
        policy.screenTime.alwaysAllowedApps = alwaysAllowed
        return policy
    }

    @Test func aBlockedAppBlocksEveryDomainOfItsServiceFromEitherPlatformsBundleID() throws {
        for bundle in ["com.zhiliaoapp.musically", "com.ss.android.ugc.trill"] {
            let (engine, rules) = try Self.engine(Self.policy(blockedApps: [bundle]))
            for name in ["tiktok.com", "www.tiktok.com", "v16.tiktokcdn.com", "api.tiktokv.com"] {
                #expect(engine.decide(name, rules: rules).description == "block service:tiktok", "\(bundle) \(name)")
            }
            #expect(engine.decide("youtube.com", rules: rules).reason == .default)
            #expect(engine.decide("nottiktok.com", rules: rules).reason == .default, "label boundaries only")
        }
    }

    @Test func aParentAllowLiftsAServiceBlockOnlyWhenAtLeastAsSpecific() throws {
        let lifting = try Self.engine(
            Self.policy(blockedApps: ["com.google.ios.youtube"], allowed: ["youtube.com", "googleapis.com"]))
        let lifted = lifting.0.decide("www.youtube.com", rules: lifting.1)
        #expect(lifted.reason == .allowedDomain && lifted.rule == "youtube.com", "\(lifted)")
        // googleapis.com is less specific than youtubei.googleapis.com: still blocked.
        #expect(
            lifting.0.decide("youtubei.googleapis.com", rules: lifting.1).description == "block service:youtube")
        #expect(lifting.0.decide("i.ytimg.com", rules: lifting.1).description == "block service:youtube")
    }

    @Test func dmRestrictionAndMultiplayerModeBlockTheirKinds() throws {
        let (engine, rules) = try Self.engine(Self.policy(dm: "none", multiplayer: "off"))
        #expect(engine.decide("web.whatsapp.com", rules: rules).description == "block service:whatsapp")
        #expect(engine.decide("www.roblox.com", rules: rules).description == "block service:roblox")
        #expect(engine.decide("tiktok.com", rules: rules).reason == .default)
        for (dm, multiplayer) in [("contacts_only", "on"), ("everyone", "friends_only"), ("", "")] {
            let (open, openRules) = try Self.engine(Self.policy(dm: dm, multiplayer: multiplayer))
            #expect(open.decide("whatsapp.net", rules: openRules).reason == .default, "\(dm)")
            #expect(open.decide("roblox.com", rules: openRules).reason == .default, "\(multiplayer)")
        }
    }

    @Test func aBlockedServiceInDowntimeIsDowntimeAndAnAlwaysAllowedAppPassesTheCutoff() throws {
        let window = CompiledPolicy.DowntimeWindow(startTime: "11:00", endTime: "13:00")
        let (engine, rules) = try Self.engine(
            Self.policy(blockedApps: ["com.zhiliaoapp.musically"], alwaysAllowed: ["com.apple.Maps"], windows: [window])
        )
        // The cutoff is step 2, before the blocked apps of step 3b.
        #expect(engine.decide("tiktok.com", rules: rules).description == "block downtime")
        #expect(engine.decide("gspe1-ssl.ls.apple.com", rules: rules).description == "allow default")
        #expect(engine.decide("www.example.org", rules: rules).description == "block downtime")
        // Out of the window: the app block again.
        #expect(
            engine.decide("tiktok.com", rules: rules, at: Fixture.at(.monday, 15)).description
                == "block service:tiktok")
    }

    @Test func theCatalogueRefusesWhatItCannotEnforce() {
        func refusal(_ services: String) -> String? {
            do {
                _ = try ServiceCatalogue.decode(Array(#"{"format": 1, "services": [\#(services)]}"#.utf8))
                return nil
            } catch { return error.path }
        }
        let good = #""bundle_ids": {"ios": ["a.b"]}, "domains": ["a.example"], "source": "s""#
        #expect(refusal(#"{"id": "a", "kind": "social", \#(good)}"#) == nil)
        #expect(refusal(#"{"id": "a", "kind": "chat", \#(good)}"#) == "services[0].kind")
        #expect(
            refusal(#"{"id": "a", "kind": "social", "bundle_ids": {}, "domains": ["a.example"], "source": "s"}"#)
                == "services[0].bundle_ids")
        #expect(
            refusal(
                #"{"id": "a", "kind": "social", "bundle_ids": {"ios": ["x"]}, "domains": ["A.example"], "source": "s"}"#
            )
                == "services[0].domains[0]")
        #expect(
            refusal(#"{"id": "a", "kind": "social", \#(good)}, {"id": "b", "kind": "video", \#(good)}"#)
                == "services[1].domains")
        #expect(
            refusal(#"{"id": "a", "kind": "social", \#(good)}, {"id": "a", "kind": "video", \#(good)}"#)
                == "services[1].id")
    }
}
