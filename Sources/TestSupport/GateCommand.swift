import Foundation

/// What a finished command printed.
public struct GateProcessResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs the real `phosra-gate` to completion.
public enum GateCommand {
    public static func run(_ arguments: [String], stdin: String? = nil) throws -> GateProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: GateRun.binary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try? input.fileHandleForWriting.close()
        }
        // Read both pipes concurrently so neither can fill up and stall the child.
        nonisolated(unsafe) var errData = Data()
        let reader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { usleep(1000) }
        return GateProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                                 stderr: String(decoding: errData, as: UTF8.self))
    }
}
