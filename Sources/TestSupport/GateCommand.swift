/// Runs the real `phosra-gate` to completion.
public enum GateCommand {
    /// `environment` is laid over the inherited one (e.g. `GateRun.wallClock(…)`).
    public static func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) throws
        -> ProgramOutput
    {
        try Program.run(GateRun.binary, arguments, environment: environment, stdin: stdin)
    }
}
