import Foundation
import TestSupport
import Testing

extension SyncFaultSuite {
    /// Two children, two profiles, two registrations (docs/configuration.md#profiles): each
    /// profile is synced with its own device key, gets its own policy, acks and enforcement
    /// report, and its hits are reported under its key only.
    @Suite(.serialized, .blocking) struct ProfileSyncTests {
        @Test func twoProfilesSyncWithTheirOwnKeys() throws {
            let h = try SyncHarness { policy in policy.webFilter.blockedDomains = ["reddit.com"] }
            var teenPolicy = FakePolicy.quickSetup(age: 14)
            teenPolicy.screenTime.schedule = nil
            teenPolicy.webFilter.blockedDomains = ["games.example"]
            let teenChild = h.api.addChild(age: 14)
            _ = h.api.addPolicy(teenPolicy, to: teenChild)
            let config = try h.scratch.write(
                "family.conf",
                """
                default_profile = none
                [profile kid]
                clients = 127.0.0.2
                child_id = \(h.childID)
                [profile teen]
                clients = 127.0.0.3
                child_id = \(teenChild)
                """)
            // register --profile takes the child from the section: no --child-id.
            let token = try h.scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
            for profile in ["kid", "teen"] {
                let result = try GateCommand.run([
                    "register", "--api", h.api.baseURL, "--parent-token-file", token, "--state-dir", h.state,
                    "--name", profile, "--profile", profile, "--config", config,
                ])
                try #require(result.status == 0, "\(result.stderr)")
            }
            let devices = h.api.devices
            let kidDevice = try #require(devices.first { $0.childID == h.childID })
            let teenDevice = try #require(devices.first { $0.childID == teenChild })
            let gate = try h.run(["--config": config])
            defer { gate.daemon.stop() }

            // Each profile enforces its own child's policy, once it has arrived.
            let kidBlocked = h.eventually {
                (try? gate.dig("www.reddit.com", "A", ["-b", "127.0.0.2"]).extendedErrors)
                    == [SyncHarness.redditBlock]
            }
            #expect(kidBlocked, "\(gate.log)")
            let teenBlocked = h.eventually {
                (try? gate.dig("games.example", "A", ["-b", "127.0.0.3"]).extendedErrors)
                    == ["15 (Blocked): (blocked_domain:games.example)"]
            }
            #expect(teenBlocked)
            #expect(try gate.dig("www.reddit.com", "A", ["-b", "127.0.0.3"]).extendedErrors.isEmpty)
            #expect(try gate.dig("games.example", "A", ["-b", "127.0.0.2"]).extendedErrors.isEmpty)

            // Acks and enforcement reports, each with its own key.
            #expect(h.eventually { Set(h.api.acks.map(\.deviceID)) == [kidDevice.id, teenDevice.id] })
            let statuses = h.api.reports.filter { $0.reportType == "enforcement_status" }
            #expect(Set(statuses.map(\.deviceID)).isSuperset(of: [kidDevice.id, teenDevice.id]))

            // Hits go out under the key of the profile they were decided for.
            for _ in 0..<3 { _ = try gate.dig("www.reddit.com", "A", ["-b", "127.0.0.2"]) }
            _ = try gate.dig("games.example", "A", ["-b", "127.0.0.3"])
            func events(_ device: String, _ domain: String) -> Int {
                h.api.reports.filter { $0.reportType == "blocked_attempt" && $0.deviceID == device }
                    .flatMap { $0.payload["events"]?.array ?? [] }
                    .filter { $0["domain"]?.string == domain }
                    .reduce(0) { $0 + ($1["count"]?.int ?? 0) }
            }
            #expect(
                h.eventually {
                    events(kidDevice.id, "www.reddit.com") >= 3 && events(teenDevice.id, "games.example") >= 1
                })
            #expect(events(teenDevice.id, "www.reddit.com") == 0)
            #expect(events(kidDevice.id, "games.example") == 0)
        }
    }
}
