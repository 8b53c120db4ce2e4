import FoundationEssentials
import Glibc
import HTTPClient
import SystemIO

/// `POST /children/{childID}/devices` with the parent's bearer token (docs/sync.md#registration,
/// docs/sync.md). Fields are cut to the server's column limits (`os_version` and
/// `app_version` 20, `device_model` 100) so a long one never earns a 500.
public enum Registration {
    public struct Request: Sendable {
        public var api: HTTPURL
        public var childID: String
        public var parentToken: String
        public var deviceName: String
        public var profile: String
        public var appVersion: String

        public init(
            api: HTTPURL, childID: String, parentToken: String, deviceName: String, profile: String, appVersion: String
        ) {
            self.api = api
            self.childID = childID
            self.parentToken = parentToken
            self.deviceName = deviceName
            self.profile = profile
            self.appVersion = appVersion
        }
    }

    public enum Failure: Error, CustomStringConvertible {
        case http(HTTPError)
        case refused(status: Int, message: String)
        case badResponse(String)

        public var description: String {
            switch self {
            case .http(let error): return error.description
            case .refused(let status, let message):
                return "the API refused the registration (HTTP \(status): \(message))"
            case .badResponse(let why): return "unexpected answer from the API: \(why)"
            }
        }
    }

    struct Body: Encodable {
        let deviceName: String, deviceModel: String, osVersion: String, appVersion: String, capabilities: [String]
        enum CodingKeys: String, CodingKey {
            case deviceName = "device_name"
            case deviceModel = "device_model"
            case osVersion = "os_version"
            case appVersion = "app_version"
            case capabilities
        }
    }

    struct Answer: Decodable {
        struct Device: Decodable {
            let id: String
            let childID: String
            enum CodingKeys: String, CodingKey {
                case id
                case childID = "child_id"
            }
        }
        let device: Device
        let apiKey: String
        enum CodingKeys: String, CodingKey {
            case device
            case apiKey = "api_key"
        }
    }

    public static func register(_ request: Request, client: HTTPClient) throws(Failure) -> DeviceIdentity {
        let body = Body(
            deviceName: cut(request.deviceName, 255), deviceModel: cut(deviceModel(), 100),
            osVersion: cut(osVersion(), 20), appVersion: cut(request.appVersion, 20),
            capabilities: ["dns_filter", "http_connect_proxy"])
        let bytes = Array((try? JSONEncoder().encode(body)) ?? Data("{}".utf8))
        let url = request.api.appending(path: "children").appending(path: request.childID).appending(path: "devices")
        let response: HTTPResponse
        do {
            response = try client.send(
                HTTPRequest(
                    method: "POST", url: url,
                    headers: [
                        ("Authorization", "Bearer \(request.parentToken)"), ("Content-Type", "application/json"),
                    ], body: bytes))
        } catch {
            throw .http(error)
        }
        guard response.status == 201 else {
            throw .refused(status: response.status, message: PhosraHTTPAPI.describe(response))
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(response.body)) else {
            throw .badResponse("no device and api_key in the 201 body")
        }
        let key = answer.apiKey
        guard key.utf8.count == 64, key.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else {
            throw .badResponse("the api_key is not 64 lowercase hex characters")
        }
        return DeviceIdentity(
            profile: request.profile, deviceID: answer.device.id, childID: answer.device.childID,
            api: request.api.description, key: key)
    }

    /// At most `limit` Unicode code points: the server's VARCHAR limits count code points,
    /// not the grapheme clusters `String.prefix` counts.
    static func cut(_ text: String, _ limit: Int) -> String {
        var result = ""
        result.unicodeScalars.append(contentsOf: text.unicodeScalars.prefix(limit))
        return result
    }

    /// The board's model (a Raspberry Pi's device tree) or the machine type.
    static func deviceModel() -> String {
        if let bytes = try? Files.read("/proc/device-tree/model", limit: 256) {
            let text = String(decoding: bytes.filter { $0 != 0 }, as: UTF8.self).trimmingWhitespaceAndNewlines()
            if !text.isEmpty { return text }
        }
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: name.machine) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return "Linux \(machine)"
    }

    /// `Debian 12` from /etc/os-release (NAME and VERSION_ID; PRETTY_NAME is too long for
    /// the server's 20 characters).
    static func osVersion() -> String {
        guard let bytes = try? Files.read("/etc/os-release", limit: 1 << 16) else { return "Linux" }
        var fields: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = parts[1].trimmingCharacters(in: "\"") }
        }
        let name = (fields["NAME"] ?? "Linux").split(separator: " ").first.map(String.init) ?? "Linux"
        return [name, fields["VERSION_ID"]].compactMap { $0 }.joined(separator: " ")
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        return String(self.drop { drop.contains($0) }.reversed().drop { drop.contains($0) }.reversed())
    }
}
