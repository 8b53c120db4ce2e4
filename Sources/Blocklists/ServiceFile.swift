import Policy
import SystemIO

/// `services.json` in a lists folder (docs/services.md#the-catalogue). A folder without one
/// (a parent's own lists) has no services; one that cannot be read leaves the gateway
/// without services, with a warning: DNS must not stop over it.
public enum ServiceFile {
    public static let name = "services.json"
    static let limit = 4 << 20

    /// The catalogue of `folder`, or the empty one with why.
    public static func load(folder: String) -> (catalogue: ServiceCatalogue, warning: String?) {
        let path = folder + "/" + name
        guard Files.exists(path) else { return (.empty, nil) }
        do {
            return (try ServiceCatalogue.decode(try Files.read(path, limit: limit)), nil)
        } catch {
            return (.empty, "\(path): \(error): no app services")
        }
    }
}
