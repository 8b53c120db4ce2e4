import DomainMatch
import Policy
import SystemIO

/// A lists folder that cannot be used at all (docs/blocklists.md). Problems inside it (a bad line,
/// an unknown subfolder, an unreadable file) are warnings, never fatal.
public enum ListFolderError: Error, Equatable, Sendable, CustomStringConvertible {
    case notADirectory(path: String)
    case unreadable(SystemError)

    public var description: String {
        switch self {
        case .notADirectory(let path): return "\(path): not a directory"
        case .unreadable(let error): return error.description
        }
    }
}

/// The list files of one folder, found but not yet read: one subfolder per category id
/// (or synonym), every `*.txt` in it a list file (docs/blocklists.md#list-files). Their paths, sizes and
/// modification times key the compiled-list cache.
public struct ListInputs: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        public let category: Category
        public let path: String
        public let size: Int64
        public let modified: Int64

        /// The file's name in its category folder.
        public var name: String {
            String(path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...])
        }
    }

    public let path: String
    public let files: [File]
    public let warnings: [String]

    public init(path: String, files: [File], warnings: [String]) {
        self.path = path
        self.files = files
        self.warnings = warnings
    }

    public static func scan(_ path: String) throws(ListFolderError) -> ListInputs {
        guard Files.isDirectory(path) else {
            if Files.exists(path) { throw .notADirectory(path: path) }
            throw .unreadable(SystemError("stat", errno: 2, subject: path))
        }
        let entries: [String]
        do { entries = try Files.list(path) } catch { throw .unreadable(error) }
        var files: [File] = []
        var warnings: [String] = []
        for entry in entries where Files.isDirectory(path + "/" + entry) {
            let directory = path + "/" + entry
            guard let category = Category(name: entry) else {
                warnings.append("\(directory): not a category id or synonym; ignored")
                continue
            }
            do {
                for name in try Files.list(directory) where name.hasSuffix(".txt") {
                    let file = directory + "/" + name
                    guard let info = try? Files.status(file) else {
                        warnings.append("\(file): cannot be read; skipped")
                        continue
                    }
                    guard info.isRegularFile else { continue }
                    files.append(
                        File(category: category, path: file, size: info.size, modified: info.modifiedNanoseconds))
                }
            } catch {
                warnings.append("\(directory): \(error)")
            }
        }
        return ListInputs(path: path, files: files, warnings: warnings)
    }

    /// These inputs with `top`'s files laid over them (the state directory's downloaded
    /// copies over the packaged folder, docs/blocklists.md#where-the-lists-are-read): a file
    /// of `top` replaces the one of the same category and file name here; the others add up.
    public func overlaid(by top: ListInputs) -> ListInputs {
        let replaced = Set(top.files.map { "\($0.category.id)/\($0.name)" })
        let kept = files.filter { !replaced.contains("\($0.category.id)/\($0.name)") }
        return ListInputs(path: path, files: kept + top.files, warnings: warnings + top.warnings)
    }

    /// Categories that have at least one list file.
    public var present: Set<Category> { Set(files.map(\.category)) }

    public var totalBytes: Int64 { files.reduce(0) { $0 + $1.size } }

    /// Identifies these inputs for the cache: format version, paths, sizes and times.
    public var key: UInt64 {
        var text = "trie-v\(TrieLayout.version)\n"
        for file in files { text += "\(file.category.id)\t\(file.path)\t\(file.size)\t\(file.modified)\n" }
        return Array(text.utf8).withUnsafeBytes { TrieChecksum.compute($0) }
    }
}
