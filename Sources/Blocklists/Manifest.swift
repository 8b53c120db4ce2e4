import FoundationEssentials
import Policy
import SystemIO

/// A manifest that cannot be used: the file, and which source or field is wrong.
public struct ManifestError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let problem: String

    public var description: String { "\(path): \(problem)" }
}

/// One public list a gateway may download (docs/blocklists.md#manifest).
public struct ListSource: Sendable, Equatable {
    /// How the list is written. The first three are category lists, all read by the same
    /// list-file reader; `addresses` is a DNS-over-HTTPS resolver address list for the
    /// firewall (docs/network.md#the-doh-address-list); `services` is an app service
    /// catalogue (docs/services.md#the-catalogue).
    public enum Format: String, Sendable, CaseIterable {
        case domains, hosts, adblock, addresses, services
    }

    /// What the list feeds.
    public enum Target: Sendable, Equatable {
        case category(Category)
        case dohAddresses
        case services
    }

    public let target: Target
    public let name: String
    /// The raw text list; always `https://`.
    public let url: String
    public let format: Format
    public let licence: String
    public let homepage: String?

    /// Where the downloaded copy lives, relative to the state directory's `lists/`:
    /// `<category>/<name as a file name>.txt`, or `doh-addresses.txt` for the address list
    /// (the file the firewall reads).
    public var file: String {
        switch target {
        case .category(let category): return "\(category.id)/\(ListSource.fileStem(name)).txt"
        case .dohAddresses: return ListSource.dohAddressesFile
        case .services: return ServiceFile.name
        }
    }

    public static let dohAddressesFile = "doh-addresses.txt"

    /// A source's name as a file name: lowercase ASCII letters and digits, every other run
    /// of characters one `-` (`Block List Project - porn` → `block-list-project-porn`).
    public static func fileStem(_ name: String) -> String {
        var stem = ""
        var pendingDash = false
        for byte in name.utf8 {
            let lower = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            if (0x61...0x7A).contains(lower) || (0x30...0x39).contains(lower) {
                if pendingDash && !stem.isEmpty { stem.append("-") }
                pendingDash = false
                stem.unicodeScalars.append(Unicode.Scalar(lower))
            } else {
                pendingDash = true
            }
        }
        return stem
    }
}

/// `blocklists/manifest.json`: the public lists a gateway may download, per category
/// (docs/blocklists.md#manifest). Parsed whole and checked before anything is fetched, so
/// a mistake in it names the source and field instead of failing halfway.
public struct Manifest: Sendable, Equatable {
    public let sources: [ListSource]

    public static let fileName = "manifest.json"

    public static func load(_ path: String) throws(ManifestError) -> Manifest {
        let bytes: [UInt8]
        do { bytes = try Files.read(path, limit: 4 << 20) } catch {
            throw ManifestError(path: path, problem: error.reason)
        }
        return try parse(bytes, path: path)
    }

    private struct Document: Decodable {
        let version: Int
        let sources: [Entry]
    }

    private struct Entry: Decodable {
        let category: String?
        let name: String?
        let url: String?
        let format: String?
        let licence: String?
        let homepage: String?
    }

    /// Parses and checks a manifest; `path` names it in errors.
    public static func parse(_ bytes: [UInt8], path: String) throws(ManifestError) -> Manifest {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw ManifestError(path: path, problem: describe(error))
        } catch {
            throw ManifestError(path: path, problem: "not JSON")
        }
        guard document.version == 1 else {
            throw ManifestError(path: path, problem: "version \(document.version) is not supported (only 1)")
        }
        var sources: [ListSource] = []
        var files: [String: Int] = [:]
        for (index, entry) in document.sources.enumerated() {
            func bad(_ problem: String) -> ManifestError {
                ManifestError(path: path, problem: "sources[\(index)]: \(problem)")
            }
            guard let name = entry.name, !ListSource.fileStem(name).isEmpty else {
                throw bad("\"name\" is missing or has no letter or digit")
            }
            guard let url = entry.url, url.lowercased().hasPrefix("https://"), url.count > 8 else {
                throw bad("\"url\" must be an https:// URL")
            }
            guard let formatText = entry.format, let format = ListSource.Format(rawValue: formatText) else {
                let known = ListSource.Format.allCases.map(\.rawValue).joined(separator: ", ")
                throw bad("\"format\" must be one of \(known)")
            }
            guard let licence = entry.licence, !licence.isEmpty else { throw bad("\"licence\" is missing") }
            let target: ListSource.Target
            if format == .addresses {
                guard entry.category == nil else {
                    throw bad("an addresses list feeds the firewall, not a category: leave \"category\" out")
                }
                target = .dohAddresses
            } else if format == .services {
                guard entry.category == nil else {
                    throw bad("a service catalogue is not a category list: leave \"category\" out")
                }
                target = .services
            } else {
                guard let text = entry.category, let category = Category(name: text) else {
                    throw bad("\"category\" must be a category id (\(entry.category ?? "missing") is not)")
                }
                target = .category(category)
            }
            let source = ListSource(
                target: target, name: name, url: url, format: format, licence: licence, homepage: entry.homepage)
            if let other = files[source.file] {
                throw bad("its copy \(source.file) would be the same file as sources[\(other)]'s")
            }
            files[source.file] = index
            sources.append(source)
        }
        return Manifest(sources: sources)
    }

    private static func describe(_ error: DecodingError) -> String {
        func at(_ path: [any CodingKey]) -> String {
            let text = path.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            return text.isEmpty ? "" : String(text.drop { $0 == "." }) + ": "
        }
        switch error {
        case .keyNotFound(let key, let context): return at(context.codingPath) + "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return at(context.codingPath) + "wrong type"
        case .dataCorrupted(let context): return at(context.codingPath) + "not valid JSON"
        @unknown default: return "not a manifest"
        }
    }
}
