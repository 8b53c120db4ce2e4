import DomainMatch
import Policy
import SystemIO

/// A lists folder that cannot be used at all (SPEC §9). Problems inside it (a bad line,
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

/// The text lists of one folder, per category: one subfolder per category id (or
/// synonym), every `*.txt` in it a list file (§1.5).
public struct ListFolder: Sendable {
    public let path: String
    public var names: [Category: [DomainName]] = [:]
    public var ips: [Category: Set<IPAddress>] = [:]
    public var stats: [Category: ListStats] = [:]
    /// Inputs as read, for a cache key: path, size and modification time.
    public var files: [(path: String, size: Int64, modified: Int64)] = []
    public var warnings: [String] = []

    /// Reads every list of the folder at `path`.
    public static func load(_ path: String) throws(ListFolderError) -> ListFolder {
        guard Files.isDirectory(path) else {
            if Files.exists(path) { throw .notADirectory(path: path) }
            throw .unreadable(SystemError("stat", errno: 2, subject: path))
        }
        var folder = ListFolder(path: path)
        let entries: [String]
        do { entries = try Files.list(path) } catch { throw .unreadable(error) }
        for entry in entries where Files.isDirectory(path + "/" + entry) {
            guard let category = Category(name: entry) else {
                folder.warnings.append("\(path)/\(entry): not a category id or synonym; ignored")
                continue
            }
            folder.loadCategory(category, directory: path + "/" + entry)
        }
        return folder
    }

    private mutating func loadCategory(_ category: Category, directory: String) {
        let files: [String]
        do {
            files = try Files.list(directory).filter { $0.hasSuffix(".txt") }
        } catch {
            warnings.append("\(directory): \(error)")
            return
        }
        for file in files {
            let filePath = directory + "/" + file
            do {
                let info = try Files.status(filePath)
                guard info.isRegularFile else { continue }
                let bytes = try Files.read(filePath)
                self.files.append((filePath, info.size, info.modifiedNanoseconds))
                var names = self.names[category] ?? []
                var ips = self.ips[category] ?? []
                let fileStats = ListFile.parse(bytes) { entry in
                    switch entry {
                    case .name(let name): names.append(name)
                    case .ip(let address): ips.insert(address)
                    }
                }
                self.names[category] = names
                self.ips[category] = ips
                stats[category, default: ListStats()].add(fileStats)
            } catch {
                warnings.append("\(filePath): \(error); skipped")
            }
        }
    }

    /// Category lists for the decision engine through the simple matcher.
    public func categorySet() -> CategorySet<SetMatcher> {
        CategorySet(lists: names)
    }
}
