import Blocklists
import Config
import DomainMatch
import Policy
import SystemIO
import Zoneinfo

/// Settings turned into the parts of a decision engine, with errors that name the flag
/// or file line they came from. Shared by every command that decides.
package enum EngineOptions {
    /// The configuration file (explicit, or the default one when it exists) under the
    /// command's flags.
    package static func settings(configFlag: String?, flags: Settings) throws(GatewayError) -> Settings {
        var file = Settings()
        do {
            if let path = configFlag {
                file = try ConfigFile.load(path, schema: Key.schema)
            } else if Files.exists(ConfigFile.defaultPath) {
                file = try ConfigFile.load(ConfigFile.defaultPath, schema: Key.schema)
            }
        } catch {
            throw .config(error)
        }
        return file.overridden(by: flags)
    }

    package static func decisionOptions(_ settings: Settings) -> DecisionOptions {
        var options = DecisionOptions()
        options.alwaysAllow = settings[Key.alwaysAllow]
        options.downtimeAllow = settings[Key.downtimeAllow]
        options.backgroundDomains = settings[Key.backgroundDomains]
        options.blockBypass = settings[Key.blockBypass]
        options.api = settings[Key.api]
        return options
    }

    package static func zone(_ settings: Settings) throws(GatewayError) -> ZoneRules {
        let name = settings[Key.timezone]
        guard !name.isEmpty else { return ZoneRules.system() }
        do {
            return try ZoneRules.load(named: name)
        } catch {
            throw .config(settings.error(Key.timezone, error.description))
        }
    }

    /// The list files of the configured (or default) folder with the state directory's
    /// downloaded copies over them (`ListsLocator`), not yet read.
    package static func listInputs(_ settings: Settings, stateDirectory: String?) throws(GatewayError) -> ListInputs {
        let folder = try ListsLocator.folder(settings)
        do {
            return try ListsLocator.inputs(folder: folder, stateDirectory: stateDirectory)
        } catch {
            throw .config(settings.error(Key.lists, error.description))
        }
    }

    /// The category lists: the compiled cache in the state directory when it matches the
    /// inputs, else built from the text. `writeBack` stores a fresh build there.
    package static func categoryLists(
        _ inputs: ListInputs, settings: Settings, writeBack: Bool,
        warnings: inout [String]
    ) -> CategoryLists {
        let stateDirectory = settings[Key.stateDir]
        let usable = Files.isDirectory(stateDirectory) ? stateDirectory : nil
        return ListCache.open(
            inputs, stateDirectory: usable, writeBack: writeBack && usable != nil, warnings: &warnings)
    }

    package static func policy(_ settings: Settings) throws(GatewayError) -> CompiledPolicy {
        let path = settings[Key.policy]
        guard !path.isEmpty else { throw .flag("--policy", "a CompiledPolicy file is required") }
        return try PolicyFile.load(path)
    }
}
