import FoundationEssentials
import SystemIO

/// A profile's registration with the Phosra API (docs/sync.md#registration): the 64-hex device key in a
/// file of its own, mode 0600, and the device's public facts beside it. The key is never
/// logged or printed; `description` shows only the device id.
public struct DeviceIdentity: Sendable, Equatable, CustomStringConvertible {
    public let profile: String
    public let deviceID: String
    public let childID: String
    public let api: String
    /// The key, for the `X-Device-Key` header only.
    public let key: String

    public var description: String { "device \(deviceID) (profile \(profile), child \(childID))" }

    public init(profile: String, deviceID: String, childID: String, api: String, key: String) {
        self.profile = profile
        self.deviceID = deviceID
        self.childID = childID
        self.api = api
        self.key = key
    }

    public enum Failure: Error, CustomStringConvertible {
        case notRegistered(profile: String)
        case unreadable(String)
        case badKey(path: String)

        public var description: String {
            switch self {
            case .notRegistered(let profile):
                return "profile \"\(profile)\" is not registered (run phosra-gate register)"
            case .unreadable(let why): return why
            case .badKey(let path): return "\(path): not a 64-hex device key"
            }
        }
    }

    static func directory(_ state: String) -> String { state + "/devices" }
    static func keyPath(_ state: String, _ profile: String) -> String { directory(state) + "/\(profile).key" }
    static func infoPath(_ state: String, _ profile: String) -> String { directory(state) + "/\(profile).json" }

    private struct Info: Codable {
        let deviceID: String, childID: String, api: String
        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id"
            case childID = "child_id"
            case api
        }
    }

    /// Writes the key (0600) and the facts (0644), each atomically.
    public func save(stateDirectory state: String) throws(SystemError) {
        try Files.makeDirectories(Self.directory(state), mode: 0o700)
        try Files.writeAtomically(Self.keyPath(state, profile), Array((key + "\n").utf8), mode: 0o600)
        let info = (try? JSONEncoder().encode(Info(deviceID: deviceID, childID: childID, api: api))) ?? Data()
        try Files.writeAtomically(Self.infoPath(state, profile), Array(info), mode: 0o644)
    }

    public static func load(stateDirectory state: String, profile: String) throws(Failure) -> DeviceIdentity {
        let keyPath = Self.keyPath(state, profile)
        guard Files.exists(keyPath) else { throw .notRegistered(profile: profile) }
        let keyBytes: [UInt8]
        let infoBytes: [UInt8]
        do {
            keyBytes = try Files.read(keyPath, limit: 4096)
            infoBytes = try Files.read(Self.infoPath(state, profile), limit: 1 << 16)
        } catch {
            throw .unreadable(error.description)
        }
        let key = String(decoding: keyBytes, as: UTF8.self).trimmingWhitespaceAndNewlines()
        guard key.utf8.count == 64, key.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else {
            throw .badKey(path: keyPath)
        }
        guard let info = try? JSONDecoder().decode(Info.self, from: Data(infoBytes)) else {
            throw .unreadable("\(Self.infoPath(state, profile)): not a device description")
        }
        return DeviceIdentity(profile: profile, deviceID: info.deviceID, childID: info.childID, api: info.api, key: key)
    }

    /// The profiles registered in this state directory.
    public static func registeredProfiles(stateDirectory state: String) -> [String] {
        ((try? Files.list(directory(state))) ?? []).filter { $0.hasSuffix(".key") }.map { String($0.dropLast(4)) }
    }
}

extension String {
    func trimmingWhitespaceAndNewlines() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
