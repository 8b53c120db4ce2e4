import Policy
import SystemIO

/// Watches the local policy file (docs/configuration.md): editors replace files by rename, so the path's
/// identity (device, inode, size, time) is compared on every tick rather than watching
/// one inode. A new file that does not decode keeps the last good policy.
package final class PolicyWatcher {
    let path: String
    private var seen: FileIdentity?

    package enum Change {
        case loaded(CompiledPolicy)
        case rejected(String)
    }

    init(path: String) {
        self.path = path
        seen = FileIdentity.of(path)
    }

    /// What changed since the last call, if anything.
    func poll() -> Change? {
        let now = FileIdentity.of(path)
        guard now != seen else { return nil }
        seen = now
        guard now != nil else { return .rejected("\(path): No such file or directory; keeping the last good policy") }
        do {
            return .loaded(try PolicyFile.load(path))
        } catch {
            return .rejected("\(error); keeping the last good policy")
        }
    }
}
