import Foundation

/// What a finished program printed.
public struct ProgramOutput: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs a real program (phosra-gate, curl, a shell) to completion.
public enum Program {
    /// `executable arguments…`; `environment` is laid over the inherited one, `directory`
    /// is the working directory, `stdin` is written and closed (else standard input is
    /// /dev/null). Both output pipes are read at once, so a child that fills one cannot
    /// stall while the other is being read.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        directory: URL? = nil, stdin: String? = nil
    ) throws -> ProgramOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try? input.fileHandleForWriting.close()
        }
        nonisolated(unsafe) var errData = Data()
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            readerDone.signal()
        }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        readerDone.wait()
        return ProgramOutput(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
