import Blocklists
import Config
import Policy
import SystemIO

/// Why a command cannot run: one line on stderr naming the file or flag and the problem,
/// exit status 1 (docs/configuration.md).
package enum GatewayError: Error, CustomStringConvertible {
    case usage(String)
    case config(ConfigError)
    case policyFile(path: String, problem: String)
    case lists(String)
    case flag(String, String)

    package var description: String {
        switch self {
        case .usage(let text): return text
        case .config(let error): return error.description
        case .policyFile(let path, let problem): return "\(path): \(problem)"
        case .lists(let text): return text
        case .flag(let flag, let problem): return "\(flag): \(problem)"
        }
    }
}

/// Reading a local CompiledPolicy file (`--policy`).
package enum PolicyFile {
    package static func load(_ path: String) throws(GatewayError) -> CompiledPolicy {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: 16 << 20)
        } catch {
            throw .policyFile(path: path, problem: error.reason)
        }
        do {
            return try CompiledPolicy.decode(bytes)
        } catch {
            throw .policyFile(path: path, problem: error.description)
        }
    }
}
