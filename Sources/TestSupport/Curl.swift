import Foundation

/// What one curl run printed: the output (`-i`: response heads and body), stderr, its
/// exit status, and the final and CONNECT status codes (`-w`).
public struct CurlResult: Sendable, CustomStringConvertible {
    public let exitCode: Int32
    /// Everything before the `-w` trailer: with `-i`, CONNECT response head, response head, body.
    public let output: String
    public let stderr: String
    /// `%{http_code}` of the last response (0 when there was none).
    public let status: Int
    /// `%{http_connect}`: the proxy's answer to CONNECT (0 when none was sent).
    public let connectStatus: Int

    public var description: String {
        "curl exit \(exitCode), status \(status), connect \(connectStatus)\n\(output)\nstderr: \(stderr)"
    }

    /// The body after the last response head.
    public var body: String {
        guard let range = output.range(of: "\r\n\r\n", options: .backwards) else { return output }
        return String(output[range.upperBound...])
    }
}

/// The real curl (`curl -x` for a proxy, `-p` to tunnel through it with CONNECT), run to
/// completion with a time limit.
public enum Curl {
    public static let path = "/usr/bin/curl"

    /// `curl -s -S -i --max-time T ARGS… -w '\n%{http_code} %{http_connect}'`, after
    /// `prefix` when given (`ip netns exec NAMESPACE`: curl on a device the test made).
    public static func run(_ arguments: [String], timeout: Int = 8, prefix: [String] = []) throws -> CurlResult {
        let options = ["-s", "-S", "-i", "--max-time", "\(timeout)", "-w", "\n@@%{http_code} %{http_connect}"]
        let words = prefix + [path] + options + arguments
        let result = try Program.run(words[0], Array(words.dropFirst()))
        let text = result.stdout
        var output = text
        var status = 0
        var connect = 0
        if let marker = text.range(of: "\n@@", options: .backwards) {
            output = String(text[..<marker.lowerBound])
            let codes = text[marker.upperBound...].split(separator: " ").compactMap { Int($0) }
            status = codes.first ?? 0
            connect = codes.count > 1 ? codes[1] : 0
        }
        return CurlResult(
            exitCode: result.status, output: output, stderr: result.stderr, status: status,
            connectStatus: connect)
    }
}
