import SystemIO

/// Finds the default lists folder: `./blocklists`, the `blocklists/` of the checkout the
/// binary was built in, then the installed copy.
enum ListsLocator {
    static let installed = "/usr/share/phosra-gate/blocklists"

    static func defaultFolder() -> String? {
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
}
