import Foundation
import Testing
import Zoneinfo

/// Loading zones by name and choosing the system zone.
@Suite struct LoadTests {
    @Test(arguments: [
        "../etc/passwd", "/etc/localtime", "", "Europe/../../etc/passwd", "Europe/..",
        "..", "./UTC", "Europe//Berlin", "Europe/Berlin/", "Europe/Berlin\u{0}", "Europe/Berlin ",
        "Europe\\Berlin", "Éurope/Berlin", String(repeating: "A", count: 300),
    ])
    func badNamesAreRejected(name: String) {
        #expect(throws: ZoneError.invalidName(name)) {
            try ZoneRules.load(named: name, directory: zoneinfoDirectory)
        }
    }

    @Test(arguments: ["No/Such_Zone", "Nowhere", "Europe", "UTC/Extra", "europe/berlin"])
    func unknownZones(name: String) {
        #expect(throws: ZoneError.unknownZone(name)) {
            try ZoneRules.load(named: name, directory: zoneinfoDirectory)
        }
    }

    @Test func filesThatAreNotZonesAreMalformed() {
        #expect {
            try ZoneRules.load(named: "zone.tab", directory: zoneinfoDirectory)
        } throws: { error in
            isMalformed(error as! ZoneError)
        }
    }

    @Test func directoryMayEndWithSlashAndNamesMayBeAliases() throws {
        let berlin = try ZoneRules.load(named: "Europe/Berlin", directory: zoneinfoDirectory + "/")
        #expect(berlin.name == "Europe/Berlin")
        let eire = try ZoneRules.load(named: "Eire", directory: zoneinfoDirectory)
        #expect(eire.name == "Eire")
        #expect(eire.offset(at: utc(2026, 7, 1)) == 3600)
        let gmtPlus = try ZoneRules.load(named: "Etc/GMT+5", directory: zoneinfoDirectory)
        #expect(gmtPlus.offset(at: 0) == -18000)  // POSIX sign convention
        #expect(try zone("Europe/Berlin") == berlin)
        #expect(try zone("Europe/Paris") != berlin)
    }

    @Test func missingDirectoryMeansUnknownZone() {
        #expect(throws: ZoneError.unknownZone("UTC")) {
            try ZoneRules.load(named: "UTC", directory: "/nonexistent/zoneinfo")
        }
    }

    /// Every TZif file tzdata installs parses, and its footer (if any) is a valid rule.
    @Test func everyInstalledZoneLoads() throws {
        let root = URL(fileURLWithPath: zoneinfoDirectory)
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
        var count = 0
        for case let url as URL in walker {
            let relative = String(url.path.dropFirst(root.path.count + 1))
            guard let bytes = FileManager.default.contents(atPath: url.path), bytes.starts(with: Array("TZif".utf8))
            else { continue }
            count += 1
            #expect(throws: Never.self, "\(relative)") {
                try ZoneRules.load(named: relative, directory: zoneinfoDirectory)
            }
        }
        #expect(count > 500)
    }

    @Test func errorsDescribeThemselves() {
        #expect(ZoneError.unknownZone("X/Y").description.contains("X/Y"))
        #expect(ZoneError.invalidName("../x").description.contains("../x"))
        #expect(ZoneError.unreadable(path: "/p", errno: 13).description.contains("Permission denied"))
        #expect(ZoneError.malformed(name: "Z", reason: "bad magic").description.contains("bad magic"))
    }
}

/// `system(tz:localtime:directory:)` is what `system()` does with $TZ and /etc/localtime.
@Suite struct SystemZoneTests {
    let scratch: URL

    init() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("zoneinfo-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    @Test func tzNamesAZone() {
        let colon = ZoneRules.system(tz: ":Europe/Berlin", localtime: "/nonexistent", directory: zoneinfoDirectory)
        #expect(colon.name == "Europe/Berlin")
        #expect(colon.offset(at: utc(2026, 7, 1)) == 7200)
        let plain = ZoneRules.system(tz: "Asia/Kolkata", localtime: "/nonexistent", directory: zoneinfoDirectory)
        #expect(plain.name == "Asia/Kolkata")
        let path = ZoneRules.system(tz: ":" + zoneinfoDirectory + "/Europe/Dublin", localtime: "/nonexistent")
        #expect(path.name == "Europe/Dublin")
        #expect(path.offset(at: utc(2026, 7, 1)) == 3600)
    }

    @Test func tzAsPosixString() {
        let rule = ZoneRules.system(
            tz: "CET-1CEST,M3.5.0,M10.5.0/3", localtime: "/nonexistent", directory: zoneinfoDirectory)
        #expect(rule.name == "CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(rule.offset(at: utc(2026, 7, 1)) == 7200)
        #expect(rule.resolve(local(2026, 3, 29, 2, 30)) == .skipped)
        // A name that is also a file wins over the POSIX reading, as in glibc: the file
        // knows that 1918's daylight time began on 31 March, not on the second Sunday.
        let file = ZoneRules.system(tz: "EST5EDT", localtime: "/nonexistent", directory: zoneinfoDirectory)
        #expect(file.offset(at: utc(1918, 3, 20, 12)) == -18000)
        let posix = ZoneRules.system(tz: "EST5EDT", localtime: "/nonexistent", directory: "/nonexistent")
        #expect(posix.offset(at: utc(1918, 3, 20, 12)) == -14400)
    }

    @Test func unusableTZFallsBackToUTC() {
        for tz in ["", ":", ":No/Such_Zone", "garbage!!", "../etc/passwd", ":EST5", ":/nonexistent/file"] {
            let rules = ZoneRules.system(
                tz: tz, localtime: zoneinfoDirectory + "/Europe/Berlin", directory: zoneinfoDirectory)
            #expect(rules == ZoneRules.utc, "TZ=\(tz)")
        }
    }

    @Test func localtimeSymlinkGivesTheName() throws {
        let link = scratch.appendingPathComponent("localtime").path
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: zoneinfoDirectory + "/Asia/Kolkata")
        let rules = ZoneRules.system(tz: nil, localtime: link, directory: zoneinfoDirectory)
        #expect(rules.name == "Asia/Kolkata")
        #expect(rules.offset(at: 0) == 19800)
        // A "posix/" alias directory is not part of the name.
        let posixLink = scratch.appendingPathComponent("posix-localtime").path
        try FileManager.default.createSymbolicLink(
            atPath: posixLink, withDestinationPath: zoneinfoDirectory + "/posix/Europe/Berlin")
        #expect(ZoneRules.system(tz: nil, localtime: posixLink, directory: zoneinfoDirectory).name == "Europe/Berlin")
        // A relative target names the zone too.
        let tree = scratch.appendingPathComponent("share/zoneinfo/America")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: zoneinfoDirectory + "/America/New_York", toPath: tree.appendingPathComponent("New_York").path)
        try FileManager.default.createDirectory(
            at: scratch.appendingPathComponent("etc"), withIntermediateDirectories: true)
        let relative = scratch.appendingPathComponent("etc/localtime").path
        try FileManager.default.createSymbolicLink(
            atPath: relative, withDestinationPath: "../share/zoneinfo/America/New_York")
        let newYork = ZoneRules.system(tz: nil, localtime: relative, directory: zoneinfoDirectory)
        #expect(newYork.name == "America/New_York")
        #expect(newYork.offset(at: utc(2026, 7, 1)) == -14400)
    }

    @Test func localtimeCopyIsCalledLocaltime() throws {
        let copy = scratch.appendingPathComponent("localtime").path
        try FileManager.default.copyItem(atPath: zoneinfoDirectory + "/Australia/Sydney", toPath: copy)
        let rules = ZoneRules.system(tz: nil, localtime: copy, directory: zoneinfoDirectory)
        #expect(rules.name == "localtime")
        #expect(rules.offset(at: utc(2026, 1, 1)) == 39600)
        #expect(ZoneRules.system(tz: nil, localtime: scratch.appendingPathComponent("missing").path) == ZoneRules.utc)
        let junk = scratch.appendingPathComponent("junk").path
        _ = FileManager.default.createFile(atPath: junk, contents: Data("not tzif".utf8))
        #expect(ZoneRules.system(tz: nil, localtime: junk) == ZoneRules.utc)
        #expect(ZoneRules.system(tz: nil, localtime: scratch.path) == ZoneRules.utc)  // a directory
    }

}
