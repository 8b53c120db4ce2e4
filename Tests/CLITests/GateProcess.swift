import Foundation
import TestSupport

/// Runs the real `phosra-gate` binary that SwiftPM built beside the test bundle.
struct GateProcess {
    static let checkout = GateRun.checkout

    static func run(_ arguments: [String], cwd: URL? = nil, environment: [String: String] = [:]) throws -> ProgramOutput
    {
        try Program.run(GateRun.binary, arguments, environment: environment, directory: cwd)
    }
}
