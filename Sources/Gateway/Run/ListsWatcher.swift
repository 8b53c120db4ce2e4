import SystemIO

/// Watches the marker `blocklists update` rewrites after replacing a category list
/// (`ListsLocator.updateMarker`): one `stat` a tick on the control thread. The marker is
/// replaced by rename, so its identity (inode, size, time) is compared, as for policy files.
package final class ListsWatcher {
    let path: String
    private var seen: FileIdentity?

    init(path: String) {
        self.path = path
        seen = FileIdentity.of(path)
    }

    /// Whether an update has finished since the last call.
    func poll() -> Bool {
        let now = FileIdentity.of(path)
        guard now != seen else { return false }
        seen = now
        return now != nil
    }
}
