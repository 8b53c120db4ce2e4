/// One fuzz target: a name (`scripts/fuzz NAME`), the property it checks in a sentence, and
/// a body that parses one input and checks that property.
///
/// A body must be deterministic (libFuzzer replays inputs) and must not keep state between
/// calls. A parser that traps or reads out of bounds is caught by the sanitizers; a
/// property that does not hold is a thrown `PropertyViolation`, which the libFuzzer entry
/// point turns into a crash and FuzzTargetsTests into a failed test.
public struct FuzzTarget: Sendable {
    public let name: String
    public let property: String
    private let body: @Sendable ([UInt8]) throws(PropertyViolation) -> Void

    init(_ name: String, _ property: String, _ body: @escaping @Sendable ([UInt8]) throws(PropertyViolation) -> Void) {
        self.name = name
        self.property = property
        self.body = body
    }

    /// Runs the body on one input; a violation comes back with this target's name.
    public func run(_ input: [UInt8]) throws(PropertyViolation) {
        do {
            try body(input)
        } catch {
            throw PropertyViolation(target: name, problem: error.problem)
        }
    }
}

/// A property that did not hold for an input: which target, and what was seen.
public struct PropertyViolation: Error, Sendable, CustomStringConvertible {
    public let target: String
    public let problem: String

    init(target: String = "", problem: String) {
        self.target = target
        self.problem = problem
    }

    public var description: String { "\(target): property violated: \(problem)" }
}

/// Throws when `condition` is false; `problem` is only built then.
@inline(__always)
func check(_ condition: Bool, _ problem: @autoclosure () -> String) throws(PropertyViolation) {
    if !condition { throw PropertyViolation(problem: problem()) }
}

/// The registry `scripts/fuzz --list`, the libFuzzer entry point and the corpus tests read.
public enum FuzzTargets {
    public static let all: [FuzzTarget] = [
        DNSQueryTarget.target, DNSAnswerTarget.target, EDNSTarget.target,
        HTTPHeadTarget.target, HTTPChunkedTarget.target, ClientHelloTarget.target,
        PolicyJSONTarget.target, ConfigTarget.target, ListLinesTarget.target,
        TrieImageTarget.target, TrieBuildTarget.target, TZifTarget.target,
    ]

    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
