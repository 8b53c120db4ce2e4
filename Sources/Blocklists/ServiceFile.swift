import Policy
import SystemIO

/// `services.json` in a lists folder (docs/services.md#the-catalogue). A folder without one
/// (a parent's own lists) has no services; one that cannot be read leaves the gateway
/// without services, with a warning: DNS must not stop over it.
public enum ServiceFile {
    public static let name = "services.json"
    static let limit = 4 << 20

    /// The catalogue a gateway uses: the copy `blocklists update` downloaded into
    /// `downloaded` (the state directory's lists) when there is one that reads, else
    /// `folder`'s (the packaged one). A downloaded copy that does not read is named.
    /// `path`: the file the catalogue came from.
    public static func load(
        folder: String, downloaded: String?
    ) -> (catalogue: ServiceCatalogue, warning: String?, path: String) {
        let packagedPath = folder + "/" + name
        guard let downloaded, Files.exists(downloaded + "/" + name) else {
            let packaged = load(folder: folder)
            return (packaged.catalogue, packaged.warning, packagedPath)
        }
        switch read(downloaded) {
        case .success(let catalogue): return (catalogue, nil, downloaded + "/" + name)
        case .failure(let problem):
            let packaged = load(folder: folder)
            let fallback = packaged.warning.map { "; \($0)" } ?? "; using \(packagedPath)"
            return (packaged.catalogue, problem.text + fallback, packagedPath)
        }
    }

    /// The catalogue of `folder`, or the empty one with why.
    public static func load(folder: String) -> (catalogue: ServiceCatalogue, warning: String?) {
        guard Files.exists(folder + "/" + name) else { return (.empty, nil) }
        switch read(folder) {
        case .success(let catalogue): return (catalogue, nil)
        case .failure(let problem): return (.empty, problem.text + ": no app services")
        }
    }

    /// The catalogue in `folder`, or why it does not read (with the file's path).
    private static func read(_ folder: String) -> Result<ServiceCatalogue, Unreadable> {
        let path = folder + "/" + name
        do {
            return .success(try ServiceCatalogue.decode(try Files.read(path, limit: limit)))
        } catch {
            return .failure(Unreadable(text: "\(path): \(error)"))
        }
    }

    private struct Unreadable: Error {
        let text: String
    }
}
