import Blocklists
import Config
import DomainMatch
import Gateway
import Policy
import SystemIO

/// `phosra-gate services`: the service catalogue (docs/services.md) — every app the
/// gateway knows by bundle id, its kind and domains — and `services check NAME`, which
/// service a name belongs to.
enum ServicesCommand: Command {
    static let name = "services"
    static let summary = "the apps the gateway knows as network services; check NAME: whose is it"
    static let usage = """
        usage: phosra-gate services [--lists DIR] [--state-dir DIR] [--config FILE] [--json]
               phosra-gate services check [--lists DIR] [--state-dir DIR] [--config FILE] NAME...
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            return try services(words, console: console)
        } catch {
            console.err("phosra-gate services: \(error)")
            return 1
        }
    }

    private static func services(_ words: [String], console: some Console) throws(GatewayError) -> Int32 {
        let checking = words.first == "check"
        let arguments = try Arguments(command: Array(words.dropFirst(checking ? 1 : 0)), flags: ["--json": .boolean])
        let settings = try arguments.configuredSettings()
        let folder = try ListsLocator.folder(settings)
        // As `run` reads it: a copy `blocklists update` downloaded over the packaged one.
        let loaded = ListsLocator.services(folder: folder, stateDirectory: arguments.stateDirectory(settings))
        if let warning = loaded.warning { throw .usage(warning) }
        let catalogue = loaded.catalogue
        if checking {
            guard !arguments.operands.isEmpty else { throw .usage("no NAME given (see phosra-gate services --help)") }
            return check(arguments.operands, catalogue, console: console)
        }
        guard arguments.operands.isEmpty else { throw .usage("unexpected \(arguments.operands[0])\n\(usage)") }
        if arguments.flag("--json") != nil {
            for service in catalogue.services { console.out(json(service)) }
        } else {
            for service in catalogue.services {
                console.out(
                    "\(service.id) (\(service.name), \(service.kind.rawValue)): "
                        + service.domains.map(\.description).joined(separator: " ")
                        + " — apps: \(service.bundleIDs.joined(separator: " "))")
            }
            console.out("\(catalogue.services.count) services from \(loaded.path)")
        }
        return 0
    }

    /// Exit status 0 when every name is valid (whether or not a service has it), 2 otherwise.
    private static func check(_ names: [String], _ catalogue: ServiceCatalogue, console: some Console) -> Int32 {
        var status: Int32 = 0
        for text in names {
            guard let name = try? QueryName.parse(text) else {
                console.err("\(text): not a valid name")
                status = 2
                continue
            }
            if let match = catalogue.match(name) {
                let service = catalogue.services[match.service]
                console.out(
                    "\(name): \(service.id) (\(service.name), \(service.kind.rawValue)) by "
                        + "\(name.suffix(labels: match.depth)); apps: \(service.bundleIDs.joined(separator: " "))")
            } else {
                console.out("\(name): no service")
            }
        }
        return status
    }

    private static func json(_ service: ServiceCatalogue.Service) -> String {
        func list(_ items: [String]) -> String { "[" + items.map(JSONText.string).joined(separator: ",") + "]" }
        return "{\"id\":\(JSONText.string(service.id)),\"name\":\(JSONText.string(service.name)),"
            + "\"kind\":\(JSONText.string(service.kind.rawValue)),\"bundle_ids\":\(list(service.bundleIDs)),"
            + "\"domains\":\(list(service.domains.map(\.description))),\"source\":\(JSONText.string(service.source))}"
    }
}
