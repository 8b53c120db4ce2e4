import Config
import EventLoop
import Gateway
import Glibc
import HTTPClient
import Sync
import SystemIO
import TLS

/// `phosra-gate register`: registers this gateway for a child with the parent's token
/// (docs/sync.md#registration). The token is read from a file or standard input so it never shows in a
/// process list; neither it nor the device key is ever printed or logged.
enum RegisterCommand: Command {
    static let name = "register"
    static let summary = "register this gateway with the Phosra API for a child"
    static let usage = """
        usage: phosra-gate register [--api URL] [--child-id UUID] --parent-token-file FILE|- [--name NAME]
                                    [--profile NAME] [--state-dir DIR] [--ca-file FILE] [--config FILE]
        (--child-id may be left out when --profile names a [profile] section with child_id)
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let arguments = try Arguments(
                command: words,
                flags: ["--child-id": .value, "--parent-token-file": .value, "--name": .value, "--profile": .value])
            guard arguments.operands.isEmpty else { throw GatewayError.usage(usage) }
            guard let tokenFile = arguments.flag("--parent-token-file") else {
                throw GatewayError.flag("--parent-token-file", "required")
            }
            let profile = arguments.flag("--profile") ?? SyncSetup.profile
            guard !profile.isEmpty, profile.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw GatewayError.flag("--profile", "letters, digits, - and _ only")
            }
            let settings = try arguments.configuredSettings()
            // The profile's section names its child; a flag wins.
            let configured = settings.profiles.first { $0.name == profile }?.settings[Key.childID] ?? ""
            guard let childID = arguments.flag("--child-id") ?? (configured.isEmpty ? nil : configured),
                !childID.isEmpty
            else {
                throw GatewayError.flag("--child-id", "required (or child_id in the [profile \(profile)] section)")
            }
            let state = arguments.stateDirectory(settings)
            let token = try readToken(tokenFile)
            let api: HTTPURL
            do { api = try HTTPURL(settings[Key.api]) } catch {
                throw GatewayError.config(settings.error(Key.api, "\(error)"))
            }
            var context: TLSContext?
            let caFile = settings[Key.caFile]
            if !caFile.isEmpty {
                do { context = try TLSContext(caFile: caFile) } catch {
                    throw GatewayError.config(settings.error(Key.caFile, "\(error)"))
                }
            }
            let client = HTTPClient(
                tls: context, connectTimeout: .seconds(15), requestTimeout: .seconds(30),
                userAgent: PhosraHTTPAPI.userAgent(version: Gateway.version), clock: clock)
            let request = Registration.Request(
                api: api, childID: childID, parentToken: token,
                deviceName: arguments.flag("--name") ?? RunOptions.hostName(), profile: profile,
                appVersion: Gateway.version)
            let identity: DeviceIdentity
            do { identity = try Registration.register(request, client: client) } catch {
                throw GatewayError.usage("\(error)")
            }
            do { try identity.save(stateDirectory: state) } catch {
                throw GatewayError.usage("cannot store the device key: \(error)")
            }
            console.out(
                "registered device \(identity.deviceID) for child \(identity.childID) as profile \(profile); "
                    + "key stored in \(state)/devices/\(profile).key (mode 0600)")
            return 0
        } catch {
            console.err("phosra-gate register: \(error)")
            return 1
        }
    }

    /// The parent's bearer token from a file, or `-` for standard input; trimmed.
    static func readToken(_ source: String) throws(GatewayError) -> String {
        let bytes: [UInt8]
        do { bytes = try Files.read(source == "-" ? "/dev/stdin" : source, limit: 64 << 10) } catch {
            throw .flag("--parent-token-file", error.description)
        }
        let token = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isWhitespace).joined()
        guard !token.isEmpty else { throw .flag("--parent-token-file", "the token is empty") }
        return token
    }
}
