import DomainMatch
import FoundationEssentials

/// The apps a parent names by bundle id, as network services (docs/services.md): each with
/// its kind and the domains its app and site need, matched with suffix semantics. Read
/// from `services.json` in the lists folder; immutable, shared by every profile.
public struct ServiceCatalogue: Sendable {
    public struct Service: Equatable, Sendable {
        public let id: String
        public let name: String
        public let kind: Kind
        /// iOS and Android bundle ids, as the CompiledPolicy names apps.
        public let bundleIDs: [String]
        public let domains: [DomainName]
        /// Domains another service lists too, on purpose (a shared CDN).
        public let sharedDomains: [DomainName]
        /// Where the domains come from.
        public let source: String
    }

    /// What `dm_restriction` and `multiplayer_mode` act on; the rest is for reports.
    public enum Kind: String, Sendable, CaseIterable {
        case social, video, messaging, gaming, multiplayer, ai, streaming
    }

    public let services: [Service]
    /// Bundle id → service.
    private let byBundle: [String: Int]
    /// Domain bytes → service; probed at each label boundary of a name without copying it.
    private let byDomain: [ArraySlice<UInt8>: Int]

    public static let empty = ServiceCatalogue(services: [])

    public init(services: [Service]) {
        self.services = services
        var byBundle: [String: Int] = [:]
        var byDomain: [ArraySlice<UInt8>: Int] = [:]
        for (index, service) in services.enumerated() {
            for bundle in service.bundleIDs where byBundle[bundle] == nil { byBundle[bundle] = index }
            for domain in service.domains where byDomain[domain.bytes[...]] == nil {
                byDomain[domain.bytes[...]] = index
            }
        }
        self.byBundle = byBundle
        self.byDomain = byDomain
    }

    /// The service a bundle id means, if any.
    public func service(forBundle bundleID: String) -> Int? { byBundle[bundleID] }

    /// The service whose most specific domain covers `name`, and that domain's label count.
    public func match(_ name: DomainName) -> (service: Int, depth: Int)? {
        guard !byDomain.isEmpty else { return nil }
        let bytes = name.bytes
        var start = 0
        var depth = name.labelCount
        while true {
            if let service = byDomain[bytes[start...]] { return (service, depth) }
            guard let dot = bytes[start...].firstIndex(of: UInt8(ascii: ".")) else { return nil }
            start = dot + 1
            depth -= 1
        }
    }

    /// The service with `id`, by id or name, case-insensitive.
    public func service(named text: String) -> Int? {
        let wanted = text.lowercased()
        return services.firstIndex { $0.id == wanted || $0.name.lowercased() == wanted }
    }
}

/// A catalogue that cannot be read: where and why.
public struct CatalogueError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let problem: String
    public var description: String { "\(path): \(problem)" }
}

extension ServiceCatalogue {
    /// Reads `services.json` (docs/services.md#the-catalogue): every service must have an
    /// id, a known kind, a bundle id, a valid domain and a source; no domain may belong to
    /// two services unless both mark it shared.
    public static func decode(_ data: some Collection<UInt8>) throws(CatalogueError) -> ServiceCatalogue {
        let file: CatalogueFile
        do {
            file = try JSONDecoder().decode(CatalogueFile.self, from: Data(data))
        } catch let error as DecodingError {
            throw CatalogueError(path: PolicyDecodingError(error).path, problem: PolicyDecodingError(error).problem)
        } catch {
            throw CatalogueError(path: "(top level)", problem: "\(error)")
        }
        guard file.format == 1 else { throw CatalogueError(path: "format", problem: "\(file.format) is not 1") }
        var services: [Service] = []
        var ids = Set<String>()
        var owner: [DomainName: (service: String, shared: Bool)] = [:]
        for (index, entry) in file.services.enumerated() {
            let path = "services[\(index)]"
            guard !entry.id.isEmpty, entry.id.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" || $0 == "_" }),
                ids.insert(entry.id).inserted
            else {
                throw CatalogueError(path: "\(path).id", problem: "\"\(entry.id)\" is empty, malformed or repeated")
            }
            guard let kind = Kind(rawValue: entry.kind) else {
                throw CatalogueError(path: "\(path).kind", problem: "\"\(entry.kind)\" is not a kind")
            }
            // One app can have the same id on both platforms.
            var seen = Set<String>()
            let bundles = (entry.bundleIDs.ios + entry.bundleIDs.android).filter { seen.insert($0).inserted }
            guard !bundles.isEmpty else { throw CatalogueError(path: "\(path).bundle_ids", problem: "none") }
            guard !entry.source.isEmpty else { throw CatalogueError(path: "\(path).source", problem: "empty") }
            func names(_ texts: [String], _ key: String) throws(CatalogueError) -> [DomainName] {
                var out: [DomainName] = []
                for (position, text) in texts.enumerated() {
                    guard let name = try? QueryName.parse(text), name.labelCount >= 2, name.description == text else {
                        throw CatalogueError(path: "\(path).\(key)[\(position)]", problem: "\"\(text)\" is not a name")
                    }
                    out.append(name)
                }
                return out
            }
            let domains = try names(entry.domains, "domains")
            let shared = try names(entry.sharedDomains, "shared_domains")
            guard !domains.isEmpty else { throw CatalogueError(path: "\(path).domains", problem: "none") }
            for domain in domains {
                let isShared = shared.contains(domain)
                if let earlier = owner[domain], !(earlier.shared && isShared) {
                    throw CatalogueError(
                        path: "\(path).domains",
                        problem: "\(domain) is also \(earlier.service)'s; mark it shared in both or keep it in one")
                }
                owner[domain] = (entry.id, isShared)
            }
            services.append(
                Service(
                    id: entry.id, name: entry.name.isEmpty ? entry.id : entry.name, kind: kind, bundleIDs: bundles,
                    domains: domains, sharedDomains: shared, source: entry.source))
        }
        return ServiceCatalogue(services: services)
    }
}

/// `services.json` as written.
private struct CatalogueFile: Decodable {
    struct Entry: Decodable {
        struct Bundles: Decodable {
            var ios: [String] = []
            var android: [String] = []

            init() {}

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                ios = try container.decodeIfPresent([String].self, forKey: .ios) ?? []
                android = try container.decodeIfPresent([String].self, forKey: .android) ?? []
            }

            enum CodingKeys: String, CodingKey { case ios, android }
        }

        var id: String
        var name: String
        var kind: String
        var bundleIDs: Bundles
        var domains: [String]
        var sharedDomains: [String]
        var source: String

        enum CodingKeys: String, CodingKey {
            case id, name, kind, domains, source
            case bundleIDs = "bundle_ids"
            case sharedDomains = "shared_domains"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? ""
            kind = try container.decode(String.self, forKey: .kind)
            bundleIDs = try container.decodeIfPresent(Bundles.self, forKey: .bundleIDs) ?? Bundles()
            domains = try container.decodeIfPresent([String].self, forKey: .domains) ?? []
            sharedDomains = try container.decodeIfPresent([String].self, forKey: .sharedDomains) ?? []
            source = try container.decodeIfPresent(String.self, forKey: .source) ?? ""
        }
    }

    var format: Int
    var services: [Entry]
}
