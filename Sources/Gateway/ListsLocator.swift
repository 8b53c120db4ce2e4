import Blocklists
import Config
import Policy
import SystemIO

/// The one place that decides where lists are read from (docs/blocklists.md#where-the-lists-are-read):
/// the packaged folder (`lists`, `./blocklists`, the checkout's, the installed copy), with
/// the state directory's `lists/` laid over it, where `blocklists update` puts the
/// downloaded copies (a state copy wins over a packaged file of the same category and name).
package enum ListsLocator {
    static let installed = "/usr/share/phosra-gate/blocklists"

    package static func defaultFolder() -> String? {
        if Files.isDirectory("blocklists"), Files.exists("Package.swift") || Files.exists("blocklists/manifest.json") {
            return "blocklists"
        }
        if let executable = Files.executablePath() {
            var directory = Files.directory(of: executable)
            // .build/<triple>/<configuration>/phosra-gate → the checkout is a few levels up.
            for _ in 0..<5 {
                if Files.exists(directory + "/Package.swift"), Files.isDirectory(directory + "/blocklists") {
                    return directory + "/blocklists"
                }
                directory = Files.directory(of: directory)
            }
        }
        return Files.isDirectory(installed) ? installed : nil
    }

    /// The packaged lists folder: the `lists` key, else the default one.
    package static func folder(_ settings: Settings) throws(GatewayError) -> String {
        let path = settings[Key.lists]
        if !path.isEmpty { return path }
        guard let found = defaultFolder() else {
            throw .lists("no lists folder found (./blocklists, the checkout's, \(installed)); pass --lists DIR")
        }
        return found
    }

    /// Where `blocklists update` writes and `run`, `check` and `firewall` read the
    /// downloaded copies (and the compiled file): `STATE_DIR/lists`.
    package static func stateFolder(_ stateDirectory: String) -> String { stateDirectory + "/lists" }

    /// The app service catalogue: the state directory's downloaded copy over `folder`'s.
    package static func services(
        folder: String, stateDirectory: String?
    ) -> (catalogue: ServiceCatalogue, warning: String?, path: String) {
        ServiceFile.load(folder: folder, downloaded: stateDirectory.map(stateFolder))
    }

    /// The marker `blocklists update` rewrites after replacing a category list; a running
    /// daemon watches it and swaps the lists in (`ListsWatcher`).
    package static func updateMarker(_ stateDirectory: String) -> String { stateFolder(stateDirectory) + "/updated" }

    /// The list files of the packaged folder `folder`, with the state directory's copies
    /// laid over them when that folder exists.
    static func inputs(folder: String, stateDirectory: String?) throws(ListFolderError) -> ListInputs {
        let packaged = try ListInputs.scan(folder)
        guard let stateDirectory, Files.isDirectory(stateFolder(stateDirectory)) else { return packaged }
        let downloaded: ListInputs
        do { downloaded = try ListInputs.scan(stateFolder(stateDirectory)) } catch {
            let note = "\(error); using the packaged lists only"
            return packaged.overlaid(by: ListInputs(path: stateFolder(stateDirectory), files: [], warnings: [note]))
        }
        return packaged.overlaid(by: downloaded)
    }
}
