import EventLoop
import Foundation
import SystemIO
import TestSupport
import Testing

extension SyncFaultSuite {
    /// `register`, `sync`, `status`, `hits` and the store around `run` (docs/sync.md#registration).
    @Suite(.serialized, .blocking) struct CommandAndStoreTests {
        /// Garbage where the database should be: `run` moves it aside, starts on a fresh
        /// one, logs `store_recovered`, `status` shows the note, and the sync heals the policy.
        @Test func corruptDatabaseMovedAside() throws {
            let h = try SyncHarness()
            try h.registered()
            do {
                let gate = try h.run()
                defer { gate.daemon.stop() }
                #expect(h.waitApplied(gate), "\(gate.log)")
            }
            let database = h.state + "/phosra-gate.db"
            #expect(FileManager.default.fileExists(atPath: database))
            let garbage = String(repeating: "this is not a database, a power cut ate it. ", count: 200)
            try garbage.write(toFile: database, atomically: false, encoding: .utf8)

            let gate = try h.run()
            defer { gate.daemon.stop() }
            #expect(gate.daemon.isRunning)
            #expect(gate.log.contains("event=store_recovered"), "\(gate.log)")
            #expect(
                gate.log.contains("was corrupt (file is not a database); moved aside to \(database).corrupt-"),
                "\(gate.log)")
            let files = try FileManager.default.contentsOfDirectory(atPath: h.state)
            let aside = files.filter {
                $0.hasPrefix("phosra-gate.db.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            }
            #expect(aside.count == 1, "\(files)")
            if let name = aside.first {
                #expect(
                    try String(contentsOfFile: h.state + "/" + name, encoding: .utf8) == garbage, "moved, not rewritten"
                )
            }
            let notes = h.status()?["notes"]?.array?.compactMap(\.string) ?? []
            #expect(notes.contains { $0.contains("was corrupt") && $0.contains(".corrupt-") }, "\(notes)")
            #expect(h.statusText().contains("note: \(database) was corrupt"), "\(h.statusText())")
            // The cached policy went with the file: initial policy, then the API's again.
            #expect(gate.log.contains("source=initial_policy"))
            #expect(
                h.eventually { gate.log.contains("event=policy_applied profile=default version=42 ") }, "\(gate.log)")
            #expect(try gate.dig("www.reddit.com").extendedErrors == [SyncHarness.redditBlock])
            #expect(h.eventually { h.profileStatus()?["policy_version"]?.int == 42 })
        }

        /// Registration fields beyond the server's column limits are cut (os_version and
        /// app_version 20, device_model 100, device_name 255), so the fake's 500 never
        /// fires; the token comes from a file or standard input and is never printed.
        @Test func registrationTruncatesAndGuardsTheToken() throws {
            let h = try SyncHarness()
            let name = String(repeating: "Wohnzimmer-Gateway ", count: 20)  // 380 characters
            let osRelease = try h.scratch.write(
                "os-release",
                """
                PRETTY_NAME="Extraordinarily-Long-Distribution-Name GNU/Linux 2026.11 (rolling release candidate)"
                NAME="Extraordinarily-Long-Distribution-Name GNU/Linux"
                VERSION_ID="2026.11.30-rolling-release-candidate-7"
                """)
            let model =
                "Raspberry Pi Compute Module 4 Rev 1.1 on a custom carrier board with an extraordinarily "
                + "verbose model string from its device tree"
            let tokenFile = try h.scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
            let words = [
                "register", "--api", h.api.baseURL, "--child-id", h.childID, "--parent-token-file", tokenFile,
                "--state-dir", h.state, "--name", name,
            ]
            let longEnvironment = LongRegistrationEnvironment.available
            let result =
                longEnvironment
                ? try LongRegistrationEnvironment.run(words, osRelease: osRelease, model: model, scratch: h.scratch)
                : try GateCommand.run(words)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(h.api.requests(to: .register).map(\.status) == [201])
            let device = try #require(h.api.devices.first)
            #expect(device.name == String(name.prefix(255)))
            #expect(device.osVersion.unicodeScalars.count <= 20 && device.appVersion.unicodeScalars.count <= 20)
            #expect(device.model.unicodeScalars.count <= 100)
            if longEnvironment {
                #expect(device.osVersion == "Extraordinarily-Long", "NAME's first word and VERSION_ID, cut to 20")
                #expect(device.model == String(model.prefix(100)))
            }
            #expect(
                !result.stdout.contains(FakePhosraAPI.defaultParentToken)
                    && !result.stderr.contains(FakePhosraAPI.defaultParentToken))
            let key = try #require(h.deviceKey)
            #expect(!result.stdout.contains(key) && !result.stderr.contains(key))

            // `-`: the token on standard input.
            let stdinState = h.scratch.path("state-stdin")
            let viaStdin = try GateCommand.run(
                [
                    "register", "--api", h.api.baseURL, "--child-id", h.childID,
                    "--parent-token-file", "-", "--state-dir", stdinState, "--name", "kitchen",
                ],
                stdin: "  " + FakePhosraAPI.defaultParentToken + "\n")
            #expect(viaStdin.status == 0, "\(viaStdin.stderr)")
            #expect(
                viaStdin.stdout.contains("registered device \(h.api.devices.last?.id ?? "?")"), "\(viaStdin.stdout)")
            #expect(!viaStdin.stdout.contains(FakePhosraAPI.defaultParentToken))
            #expect(FileManager.default.fileExists(atPath: stdinState + "/devices/default.key"))

            // An empty token is refused before any request.
            let registrations = h.api.requests(to: .register).count
            let emptyState = h.scratch.path("state-empty")
            let empty = try GateCommand.run(
                [
                    "register", "--api", h.api.baseURL, "--child-id", h.childID,
                    "--parent-token-file", "-", "--state-dir", emptyState,
                ], stdin: " \n")
            #expect(empty.status == 1)
            #expect(empty.stderr.contains("--parent-token-file") && empty.stderr.contains("empty"), "\(empty.stderr)")
            #expect(h.api.requests(to: .register).count == registrations)
            #expect(!FileManager.default.fileExists(atPath: emptyState + "/devices/default.key"))

            // A wrong token: the API's refusal, the token never echoed, no key stored.
            let wrongToken = "sandbox-wrong-token-0123456789"
            let wrongFile = try h.scratch.write("wrong-token", wrongToken + "\n")
            let wrongState = h.scratch.path("state-wrong")
            let wrong = try GateCommand.run([
                "register", "--api", h.api.baseURL, "--child-id", h.childID,
                "--parent-token-file", wrongFile, "--state-dir", wrongState,
            ])
            #expect(wrong.status == 1)
            #expect(wrong.stderr.contains("401"), "\(wrong.stderr)")
            #expect(!wrong.stdout.contains(wrongToken) && !wrong.stderr.contains(wrongToken))
            #expect(!FileManager.default.fileExists(atPath: wrongState + "/devices/default.key"))
            #expect(h.api.requests(to: .register).last?.status == 401)
        }

        /// The server's VARCHAR limits count code points; a name whose characters are made of
        /// several code points (flags, family emoji, decomposed accents) must be cut by code
        /// points too, or the INSERT fails with a 500.
        @Test
        func registrationCutsNamesByCodePoints() throws {
            let h = try SyncHarness()
            // 160 characters, 400 code points: under 255 characters, over 255 code points.
            let name = String(repeating: "👨‍👩‍👧‍👦 ", count: 40) + String(repeating: "Mu\u{0308}ller ", count: 20)
            #expect(name.count <= 255 && name.unicodeScalars.count > 255)
            let result = try h.register(name: name)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(h.api.requests(to: .register).map(\.status) == [201])
            let device = h.api.devices.first
            #expect((device?.name.unicodeScalars.count ?? 0) <= 255)
            #expect(device.map { name.unicodeScalars.starts(with: $0.name.unicodeScalars) } == true)
        }

        /// `sync` refuses while `run` holds the state directory and names SIGUSR1 and the
        /// pid; SIGUSR1 makes `run` poll at once; with `run` stopped `sync` does one cycle.
        @Test func syncRefusesWhileRunAndSIGUSR1SyncsNow() throws {
            let h = try SyncHarness()
            try h.registered()
            do {
                // A poll is next (the full fetch is later still), an hour away.
                let gate = try h.run(["--poll-interval": "1h", "--full-sync-interval": "6h"])
                defer { gate.daemon.stop() }
                #expect(h.waitApplied(gate), "\(gate.log)")

                let refused = try h.command(["sync"])
                #expect(refused.status == 1)
                #expect(
                    refused.stderr.contains("SIGUSR1") && refused.stderr.contains("pid \(gate.daemon.pid)"),
                    "\(refused.stderr)")
                #expect(refused.stderr.contains("kill -USR1 \(gate.daemon.pid)"))

                // No poll is due for an hour (SyncServiceClockTests shows the schedule holds),
                // but SIGUSR1 asks now, and a parent's change is enforced at once.
                let polls = h.policyRequests.count
                h.api.updatePolicy(h.policyID) { $0.webFilter.blockedDomains.append("usr1.example") }
                gate.daemon.signal(SIGUSR1)
                let clock = SystemClock()
                let signalled = clock.now()
                #expect(h.eventually(5) { h.policyRequests.count > polls })
                #expect(clock.now() - signalled < 3_000_000_000, "the poll follows the signal")
                #expect(h.policyRequests.last?.query == "since_version=42")
                #expect(
                    h.eventually { gate.log.contains("event=policy_applied profile=default version=43 ") },
                    "\(gate.log)")
                #expect(gate.log.contains("event=sync_requested"))
                #expect(try gate.dig("usr1.example").isBlocked)
            }

            h.api.updatePolicy(h.policyID)
            let synced = try h.command(["sync"])
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(synced.stdout.contains("synced profile default: policy version 44"), "\(synced.stdout)")
            #expect(h.api.acks.last?.version == 44)
            #expect(h.status()?["run"]?["alive"]?.bool == false)
            #expect(h.profileStatus()?["policy_version"]?.int == 44)

            h.api.stop()
            let down = try h.command(["sync"])
            #expect(down.status == 1)
            #expect(down.stderr.contains("sync failed"), "\(down.stderr)")
        }

        /// `phosra-gate hits`: recent blocks newest first, grouped by name with counts,
        /// reasons and clients; `--json` keys; `--since` and `--profile` filter. The older
        /// blocks come from a run whose wall clock starts at 10:00, the newer from one at
        /// 11:00, and `hits` reads at 11:00:30: an hour apart without waiting one. (Each
        /// run's SIGTERM flushes its hits into the store.)
        @Test func hitsListsRecentBlocks() throws {
            let h = try SyncHarness()
            try h.registered()
            do {
                let older = try h.run(wallClock: "2026-12-01T10:00:00Z")
                defer { older.daemon.stop() }
                #expect(h.waitApplied(older), "\(older.log)")
                for _ in 0..<2 { #expect(try older.dig("www.reddit.com").isBlocked) }
                #expect(try older.dig("www.reddit.com", "AAAA").isBlocked)
                #expect(try older.dig("www.reddit.com", from: "127.0.0.2").isBlocked)
                #expect(try older.dig("adult.example", from: "127.0.0.2").isBlocked)
            }
            do {
                let newer = try h.run(wallClock: "2026-12-01T11:00:00Z")
                defer { newer.daemon.stop() }
                #expect(try newer.dig("old.reddit.com").isBlocked, "the cached policy, at once")
            }

            func hits(_ extra: [String] = []) throws -> ProgramOutput {
                try h.command(["hits"] + extra, wallClock: "2026-12-01T11:00:30Z")
            }
            func groups(_ extra: [String] = []) throws -> [TestJSON] {
                try hits(["--json"] + extra).lines.map { try TestJSON.parse($0) }
            }
            let all = try groups()
            #expect(all.map { $0["domain"]?.string ?? "" }.first == "old.reddit.com", "\(all)")
            #expect(
                Set(all.compactMap { $0["domain"]?.string }) == ["old.reddit.com", "www.reddit.com", "adult.example"])
            let lastSeen = all.compactMap { $0["last_seen"]?.string }
            #expect(lastSeen == lastSeen.sorted(by: >), "newest first")
            for group in all {
                #expect(
                    group.keys == [
                        "profile", "domain", "count", "reasons", "categories", "clients", "first_seen", "last_seen",
                        "names",
                    ])
                #expect(group["profile"]?.string == "default")
                #expect(group["names"]?.int == 0)
            }
            let www = all.first { $0["domain"]?.string == "www.reddit.com" }
            #expect(www?["count"]?.int == 4)
            #expect(www?["reasons"] == ["blocked_domain:reddit.com"])
            #expect(www?["clients"] == ["127.0.0.1", "127.0.0.2"], "most frequent first")
            #expect(www?["categories"] == [])
            let adult = all.first { $0["domain"]?.string == "adult.example" }
            #expect(adult?["reasons"] == ["category:adult"])
            #expect(adult?["categories"] == ["adult"])
            #expect(adult?["count"]?.int == 1)

            let text = try hits()
            #expect(text.status == 0)
            #expect(text.lines.count == 3, "\(text.stdout)")
            #expect(
                text.lines.first?.contains(
                    "old.reddit.com  1 block  blocked_domain:reddit.com from 127.0.0.1  [default]") == true,
                "\(text.stdout)")
            #expect(
                text.lines.contains {
                    $0.contains("www.reddit.com  4 blocks  blocked_domain:reddit.com from 127.0.0.1, 127.0.0.2")
                },
                "\(text.stdout)")

            // --since: only what was seen in the window.
            let recent = try groups(["--since", "30m"])
            #expect(recent.map { $0["domain"]?.string ?? "" } == ["old.reddit.com"], "--since 30m: \(recent)")
            #expect(try groups(["--since", "2h"]).count == 3)

            // --profile: this one, or another that has none.
            #expect(try groups(["--profile", "default"]).count == 3)
            let other = try hits(["--profile", "kids-tablet"])
            #expect(other.status == 0 && other.stdout.isEmpty)
            #expect(other.stderr.contains("no blocks"), "\(other.stderr)")
            #expect(try hits(["--since", "soon"]).status == 1)
        }
    }
}

/// `register` in a private mount namespace whose `/etc/os-release` and
/// `/proc/device-tree/model` say what a test wants (a long distribution name, a verbose
/// board model), so the truncation to the server's column limits can be seen. Needs root
/// and `unshare`; `available` says whether this machine allows it.
enum LongRegistrationEnvironment {
    static let available: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        return (try? shell(["/usr/bin/unshare", "-m", "true"]).status) == 0
    }()

    static func run(
        _ words: [String], osRelease: String, model: String, scratch: ScratchDirectory
    ) throws -> ProgramOutput {
        let realProc = scratch.path("realproc")
        try FileManager.default.createDirectory(atPath: realProc, withIntermediateDirectories: true)
        let modelFile = try scratch.write("device-tree-model", model)
        // A tmpfs over /proc holds device-tree/model; the real procfs is bind-mounted as
        // /proc/self (the Swift runtime reads its arguments from /proc/self/cmdline).
        let script = """
            set -e
            mount --bind "$PG_OS_RELEASE" /etc/os-release
            mount -t proc proc "$PG_REAL_PROC"
            mount -t tmpfs tmpfs /proc
            mkdir -p /proc/device-tree /proc/self
            mount --bind "$PG_REAL_PROC/$$" /proc/self
            cp "$PG_MODEL" /proc/device-tree/model
            exec "$0" "$@"
            """
        return try shell(
            ["/usr/bin/unshare", "-m", "/bin/sh", "-c", script, GateRun.binary] + words,
            environment: ["PG_OS_RELEASE": osRelease, "PG_REAL_PROC": realProc, "PG_MODEL": modelFile])
    }

    private static func shell(_ words: [String], environment: [String: String] = [:]) throws -> ProgramOutput {
        try Program.run(words[0], Array(words.dropFirst()), environment: environment)
    }
}
