import Blocklists
import Config
import EventLoop
import Gateway
import HTTPClient
import SystemIO
import TLS

/// `phosra-gate blocklists update`: downloads the manifest's sources into the state
/// directory (docs/blocklists.md#updating-lists), one report line per source, exit 1
/// when any failed. A running daemon notices the marker it rewrites and swaps the new
/// lists in (`ListsWatcher`).
enum ListUpdateCommand: Command {
    static let name = "update"
    static let summary = "download the category lists of the manifest"
    static let usage = """
        usage: phosra-gate blocklists update [--config FILE] [--lists DIR] [--manifest FILE] [--state-dir DIR]
                                             [--ca-file FILE] [--list-max-size BYTES] [--list-timeout DURATION]
                                             [--force]
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        if words.contains("--help") {
            console.out(usage)
            return 0
        }
        do {
            let arguments = try Arguments(command: words, flags: ["--manifest": .value, "--force": .boolean])
            guard arguments.operands.isEmpty else {
                throw GatewayError.usage("unexpected \"\(arguments.operands[0])\"\n" + usage)
            }
            let settings = try arguments.configuredSettings()
            let stateDirectory = arguments.stateDirectory(settings)
            let manifestPath =
                try arguments.flag("--manifest") ?? ListsLocator.folder(settings) + "/" + Manifest.fileName
            let manifest: Manifest
            do { manifest = try Manifest.load(manifestPath) } catch { throw GatewayError.lists(error.description) }
            let folder = ListsLocator.stateFolder(stateDirectory)
            let lock: DirectoryLock
            do { lock = try DirectoryLock(directory: folder) } catch {
                throw GatewayError.usage("\(folder): \(error) (another blocklists update is running)")
            }
            defer { withExtendedLifetime(lock) {} }
            let update = SourceUpdate(
                folder: folder, downloader: ListDownloader(client: try client(settings, clock: clock)),
                force: arguments.flag("--force") == "true")
            let report = try updateAll(manifest, update: update, folder: folder, console: console)
            if report.categoriesChanged || report.servicesChanged {
                if report.categoriesChanged { try compile(settings, stateDirectory: stateDirectory, console: console) }
                let marker = ListsLocator.updateMarker(stateDirectory)
                do { try Files.writeAtomically(marker, Array("\(clock.wall().unixSeconds)\n".utf8)) } catch {
                    console.err("warning: \(marker): \(error); a running gateway picks the lists up at SIGHUP")
                }
            }
            if report.addressesChanged {
                console.out("the firewall reads the new address list at the next phosra-gate firewall apply")
            }
            console.out(report.summary)
            return report.failed == 0 ? 0 : 1
        } catch {
            console.err("phosra-gate blocklists update: \(error)")
            return 1
        }
    }

    struct Report {
        var updated = 0
        var unchanged = 0
        var failed = 0
        var categoriesChanged = false
        var addressesChanged = false
        var servicesChanged = false

        var summary: String {
            "\(updated + unchanged + failed) sources: \(updated) updated, \(unchanged) unchanged, \(failed) failed"
        }
    }

    /// Every source in manifest order, one line each (failures on stderr), then the
    /// validators written back.
    static func updateAll(
        _ manifest: Manifest, update: SourceUpdate, folder: String, console: some Console
    ) throws(GatewayError) -> Report {
        let tablePath = folder + "/" + ValidatorTable.fileName
        var table = ValidatorTable(
            parsing: (try? Files.read(tablePath, limit: 4 << 20)).map { String(decoding: $0, as: UTF8.self) } ?? "")
        let before = table
        var report = Report()
        for source in manifest.sources {
            switch update.run(source, validators: &table) {
            case .updated(let names, let previous):
                report.updated += 1
                switch source.target {
                case .dohAddresses: report.addressesChanged = true
                case .services: report.servicesChanged = true
                case .category: report.categoriesChanged = true
                }
                console.out("\(source.file): updated, \(names) \(unit(source)) (\(was(previous)))")
            case .unchanged(let why):
                report.unchanged += 1
                console.out("\(source.file): unchanged, \(why)")
            case .failed(let why, let previous):
                report.failed += 1
                let kept = previous.map { "kept the previous copy (\($0) \(unit(source)))" } ?? "no previous copy"
                console.err("\(source.file): failed: \(why); \(kept) [\(source.url)]")
            }
        }
        if table != before {
            do { try Files.writeAtomically(tablePath, Array(table.text.utf8)) } catch {
                console.err("warning: \(tablePath): \(error); the next update downloads every list again")
            }
        }
        return report
    }

    /// Builds the compiled file from the lists as `run` finds them, so that a running
    /// daemon (and the next start) maps it instead of building.
    static func compile(_ settings: Settings, stateDirectory: String, console: some Console) throws(GatewayError) {
        let inputs = try EngineOptions.listInputs(settings, stateDirectory: stateDirectory)
        var warnings = inputs.warnings
        let lists = CategoryLists.build(inputs, warnings: &warnings)
        for warning in warnings { console.err("warning: \(warning)") }
        let target = ListCache.path(stateDirectory: stateDirectory)
        do { try ListCache.write(lists.trie, to: target) } catch {
            console.err("warning: \(target): \(error); the gateway compiles the lists itself")
            return
        }
        console.out("compiled \(lists.trie.nameCount) names from \(inputs.files.count) files into \(target)")
    }

    /// The HTTPS client of one update: `ca_file` or the system store, the size limit and
    /// the timeout of `list_max_size` and `list_timeout`.
    static func client(_ settings: Settings, clock: any Clock) throws(GatewayError) -> HTTPClient {
        var context: TLSContext?
        let caFile = settings[Key.caFile]
        if !caFile.isEmpty {
            do { context = try TLSContext(caFile: caFile) } catch {
                throw .config(settings.error(Key.caFile, "\(error)"))
            }
        }
        let timeout = settings[Key.listTimeout]
        guard timeout > .zero else { throw .config(settings.error(Key.listTimeout, "must be more than 0s")) }
        let maxSize = settings[Key.listMaxSize]
        guard maxSize > 0 else { throw .config(settings.error(Key.listMaxSize, "must be more than 0")) }
        return HTTPClient(
            tls: context, connectTimeout: min(timeout, .seconds(15)), requestTimeout: timeout,
            maxResponseBytes: maxSize, userAgent: "phosra-gate/\(Gateway.version) (blocklists update)", clock: clock)
    }

    private static func unit(_ source: ListSource) -> String {
        switch source.format {
        case .addresses: "addresses"
        case .services: "services"
        case .domains, .hosts, .adblock: "names"
        }
    }

    private static func was(_ previous: Int?) -> String { previous.map { "was \($0)" } ?? "new" }
}
