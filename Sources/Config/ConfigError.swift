/// A configuration problem, naming where it is: file and line, or the flag.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Origin: Equatable, Sendable {
        case file(path: String, line: Int)
        case flag(String)
    }

    public let origin: Origin
    /// The key concerned, when there is one.
    public let key: String?
    public let problem: String

    public init(_ origin: Origin, key: String?, _ problem: String) {
        self.origin = origin
        self.key = key
        self.problem = problem
    }

    public var description: String {
        switch origin {
        case .file(let path, let line):
            let place = line > 0 ? "\(path):\(line): " : "\(path): "
            return place + (key.map { "\($0): " } ?? "") + problem
        case .flag(let flag):
            return "\(flag): \(problem)"
        }
    }
}
