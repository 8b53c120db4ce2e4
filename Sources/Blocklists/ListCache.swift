import DomainMatch
import SystemIO

/// Why a compiled list file was not used; it is then rebuilt from the text lists.
public enum ListCacheError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(path: String)
    case unreadable(SystemError)
    case invalid(path: String, TrieImageError)
    case stale(path: String)

    public var description: String {
        switch self {
        case .missing(let path): return "\(path): no compiled lists yet"
        case .unreadable(let error): return error.description
        case .invalid(let path, let error): return "\(path): \(error)"
        case .stale(let path): return "\(path): built from other list files"
        }
    }
}

/// The compiled list file (docs/blocklists.md): written to a temporary file and renamed into place,
/// mapped read-only, checked before use; a bad or stale file is never served.
public enum ListCache {
    /// Where `run` and `check` look for the category trie.
    public static func path(stateDirectory: String) -> String { stateDirectory + "/lists/categories.trie" }

    /// Maps and checks a compiled file: header, version and sections always, the
    /// checksum too, and the input key when `expectedKey` is given.
    public static func load(_ path: String, expectedKey: UInt64? = nil) throws(ListCacheError) -> LabelTrie {
        guard Files.exists(path) else { throw .missing(path: path) }
        let mapped: MappedFile
        do { mapped = try MappedFile.map(path) } catch { throw .unreadable(error) }
        let bytes = TrieBytes(base: mapped.base, count: mapped.count) { MappedFile.unmap($0, $1) }
        let trie: LabelTrie
        do {
            trie = try LabelTrie(bytes, verifyChecksum: true)
        } catch {
            throw .invalid(path: path, error)
        }
        if let expectedKey, trie.inputKey != expectedKey { throw .stale(path: path) }
        return trie
    }

    /// Writes the trie's image atomically (temporary file, fsync, rename).
    public static func write(_ trie: LabelTrie, to path: String) throws(SystemError) {
        try Files.makeDirectories(Files.directory(of: path))
        try Files.writeAtomically(path, bytes: trie.bytes.buffer)
    }

    /// The category lists for `inputs`: from the cache in `stateDirectory` when it is
    /// there, valid and built from these inputs; otherwise built from the text (and
    /// written back when `writeBack`, then served from the file written). `warnings` hears
    /// why the cache was not used.
    public static func open(
        _ inputs: ListInputs, stateDirectory: String?, writeBack: Bool,
        warnings: inout [String], progress: ((Int64, Int64) -> Void)? = nil
    ) -> CategoryLists {
        let cachePath = stateDirectory.map { path(stateDirectory: $0) }
        if let cachePath {
            do {
                return CategoryLists(trie: try load(cachePath, expectedKey: inputs.key), present: inputs.present)
            } catch .missing {
                // First use: nothing to say.
            } catch {
                warnings.append("\(error); rebuilding from the text lists")
            }
        }
        let lists = CategoryLists.build(inputs, warnings: &warnings, progress: progress)
        if writeBack, let cachePath {
            do { try write(lists.trie, to: cachePath) } catch {
                warnings.append("\(cachePath): cannot write the compiled lists: \(error)")
                return lists
            }
            // Served from the file just written, as on every later start: its pages are the
            // kernel's page cache, which it can drop and read again when memory runs short,
            // where the built image is heap that stays resident. That image is freed with
            // `lists`, here.
            do {
                let mapped = try load(cachePath, expectedKey: inputs.key)
                return CategoryLists(trie: mapped, present: lists.present, stats: lists.stats)
            } catch {
                warnings.append("\(error); serving the lists built in memory")
            }
        }
        return lists
    }
}
