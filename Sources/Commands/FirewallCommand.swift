import Config
import DomainMatch
import EventLoop
import Firewall
import Gateway
import Glibc
import Policy
import SystemIO

/// `phosra-gate firewall print|apply|watch|remove`: the nftables table that keeps the LAN's
/// filtered clients from going around the gateway (docs/network.md#the-firewall). `print`
/// needs no root; `apply` replaces the table in one `nft -f` transaction; `watch` hands
/// the table's refused egress attempts to the daemon until stopped (`FirewallWatch`);
/// `remove` deletes only that table, and reads no configuration, so a broken file never
/// keeps the table in place.
enum FirewallCommand: Command {
    static let name = "firewall"
    static let summary = "print | apply | watch | remove: the nftables table that keeps the LAN on the gateway"
    static let usage = """
        usage: phosra-gate firewall print [--config FILE] [--lan-interfaces IF,…] [any other key as --key value]
               phosra-gate firewall apply [--config FILE] [--lan-interfaces IF,…] [any other key as --key value]
               phosra-gate firewall watch [--config FILE] [--egress-attempts FILE]
               phosra-gate firewall remove
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        guard let verb = words.first, ["print", "apply", "watch", "remove"].contains(verb) else {
            console.err(usage)
            return 1
        }
        do {
            let arguments = try Arguments(command: Array(words.dropFirst()), flags: [:])
            guard arguments.operands.isEmpty else {
                throw GatewayError.usage("unexpected \"\(arguments.operands[0])\"\n" + usage)
            }
            let table = "table \(Ruleset.family) \(Ruleset.table)"
            if verb == "remove" {
                try Nftables.run(Ruleset.removeScript)
                console.out("removed \(table) (if there was one)")
                return 0
            }
            let configPath = arguments.flag("--config")
            let fromCheckout = configPath == nil && !Files.exists(ConfigFile.defaultPath)
            let settings = try EngineOptions.settings(configFlag: configPath, flags: arguments.settings)
            if verb == "watch" {
                do {
                    try FirewallWatch.run(
                        file: settings[Key.egressAttempts], log: Logger(format: settings[Key.logFormat]),
                        clock: clock)
                } catch { throw GatewayError.usage("watch: \(error)") }
                return 0
            }
            var warnings: [String] = []
            let model = try Self.model(settings, fromCheckout: fromCheckout, warnings: &warnings)
            for warning in warnings { console.err("warning: \(warning)") }
            if verb == "print" {
                console.out(String(try Self.text { () throws(FirewallError) in try Ruleset.text(model) }.dropLast()))
                return 0
            }
            try Nftables.run(try Self.text { () throws(FirewallError) in try Ruleset.applyScript(model) })
            let interfaces = model.lanInterfaces.map(\.text).joined(separator: ", ")
            let web = model.roster.members.map(\.name).filter { model.egress[$0] == .web }
            console.out(
                "applied \(table): LAN \(interfaces), DNS redirected to port \(model.dns.v4) (IPv4) and "
                    + "\(model.dns.v6) (IPv6), \(model.doh.count) DNS-over-HTTPS entries, egress = web for "
                    + (web.isEmpty ? "no profile" : web.joined(separator: ", ")))
            return 0
        } catch {
            console.err("phosra-gate firewall: \(error)")
            return 1
        }
    }

    /// The firewall's model of `settings`: the same configuration file and flags as `run`,
    /// so the ports it redirects to are the ports `run` listens on.
    static func model(
        _ settings: Settings, fromCheckout: Bool, warnings: inout [String]
    ) throws(GatewayError)
        -> FirewallModel
    {
        let interfaces = settings[Key.lanInterfaces]
        guard !interfaces.isEmpty else {
            let problem = "name the interfaces the LAN is on, e.g. lan_interfaces = br-lan (--lan-interfaces br-lan)"
            if settings.isSet(Key.lanInterfaces) {
                throw .config(settings.error(Key.lanInterfaces, "is empty: \(problem)"))
            }
            throw .usage("lan_interfaces is not set: \(problem)")
        }
        let dnsListen =
            !settings.isSet(Key.dnsListen) && fromCheckout ? RunOptions.checkoutListen : settings[Key.dnsListen]
        let dns = try ports(dnsListen, key: Key.dnsListen, settings: settings, what: "DNS", warnings: &warnings)
        let transparentListen = settings[Key.transparentListen]
        let transparent =
            transparentListen.isEmpty
            ? nil
            : try ports(
                transparentListen, key: Key.transparentListen, settings: settings, what: "web traffic",
                warnings: &warnings)
        let plan = try ProfilePlan.from(settings, registered: [])
        let stateDirectory =
            !settings.isSet(Key.stateDir) && fromCheckout ? RunOptions.checkoutStateDirectory : settings[Key.stateDir]
        let doh = try DoHAddresses.load(settings, stateDirectory: stateDirectory, warnings: &warnings)
        return FirewallModel(
            lanInterfaces: interfaces, dns: dns, transparent: transparent, roster: plan.roster, doh: doh,
            pagePorts: PageSetup.ports(settings), egress: egress(settings, roster: plan.roster),
            egressAllow: settings[Key.egressAllow])
    }

    /// Each profile's `egress`: its section's, else the top-level one (whose default is
    /// `web`). Without profile sections the one profile takes the top-level value.
    static func egress(_ settings: Settings, roster: ProfileRoster) -> [String: Egress] {
        var chosen = Dictionary(uniqueKeysWithValues: roster.members.map { ($0.name, settings[Key.egress]) })
        for (name, table) in settings.profiles where table.isSet(Key.egress) { chosen[name] = table[Key.egress] }
        return chosen
    }

    private static func ports(
        _ listen: [ListenAddress], key: ConfigKey<[ListenAddress]>, settings: Settings, what: String,
        warnings: inout [String]
    ) throws(GatewayError) -> RedirectPorts {
        let written = listen.map(\.description).joined(separator: ", ")
        guard let chosen = RedirectPorts.serving(listen) else {
            throw .config(
                settings.error(
                    key,
                    "\(written.isEmpty ? "no address" : written + " is loopback only"): \(what) redirected from the "
                        + "LAN would reach no listener; listen on the LAN's address or the wildcard (0.0.0.0, [::])"))
        }
        for family in chosen.unserved {
            let port = family == "IPv6" ? chosen.ports.v6 : chosen.ports.v4
            warnings.append(
                "\(key.name) has no \(family) address a redirect reaches (\(written)): \(family) \(what) from "
                    + "the LAN is redirected to port \(port), where nothing listens, and fails")
        }
        return chosen.ports
    }

    private static func text(_ make: () throws(FirewallError) -> String) throws(GatewayError) -> String {
        do { return try make() } catch { throw .usage(error.description) }
    }
}

/// The DNS-over-HTTPS addresses the firewall refuses (docs/network.md#the-doh-address-list):
/// the lists folder's `doh-addresses.txt` (the project's built-in list), the same file in
/// the state directory's `lists/` when there is one (a downloaded list), and `doh_addresses`.
enum DoHAddresses {
    static let fileName = "doh-addresses.txt"

    static func load(
        _ settings: Settings, stateDirectory: String, warnings: inout [String]
    ) throws(GatewayError)
        -> [AddressRange]
    {
        var entries: [AddressRange] = []
        let folder = settings[Key.lists].isEmpty ? ListsLocator.defaultFolder() : settings[Key.lists]
        if let folder {
            let path = folder + "/" + fileName
            if Files.exists(path) {
                entries += try read(path)
            } else {
                warnings.append("\(path) not found: only doh_addresses are refused as DNS-over-HTTPS resolvers")
            }
        } else {
            warnings.append("no lists folder found: only doh_addresses are refused as DNS-over-HTTPS resolvers")
        }
        let downloaded = ListsLocator.stateFolder(stateDirectory) + "/" + fileName
        if Files.exists(downloaded) { entries += try read(downloaded) }
        return entries + settings[Key.dohAddresses]
    }

    private static func read(_ path: String) throws(GatewayError) -> [AddressRange] {
        let bytes: [UInt8]
        do { bytes = try Files.read(path, limit: 4 << 20) } catch { throw .lists("\(path): \(error.reason)") }
        do {
            return try DoHAddressList.parse(String(decoding: bytes, as: UTF8.self), path: path)
        } catch {
            throw .lists(error.description)
        }
    }
}

/// `nft -f -` with a script on its standard input: one transaction, all or nothing.
enum Nftables {
    static let candidates = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", "/bin/nft"]

    /// The first of `candidates` that is executable.
    static var path: String? { candidates.first { access($0, X_OK) == 0 } }

    static func run(_ script: String) throws(GatewayError) {
        guard let path else {
            throw .usage("nft not found (\(candidates.joined(separator: ", "))): install nftables")
        }
        Signals.ignoreBrokenPipe()
        let result: ChildProcess.Result
        do { result = try ChildProcess.run(path, ["-f", "-"], input: Array(script.utf8)) } catch {
            throw .usage("\(error)")
        }
        guard result.status == 0 else {
            let said = result.text.split(separator: "\n").joined(separator: "\n  ")
            throw .usage("nft -f - failed (exit status \(result.status)):\n  \(said)")
        }
    }
}
