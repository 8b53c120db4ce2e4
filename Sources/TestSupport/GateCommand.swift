/// Runs the real `phosra-gate` to completion.
public enum GateCommand {
    public static func run(_ arguments: [String], stdin: String? = nil) throws -> ProgramOutput {
        try Program.run(GateRun.binary, arguments, stdin: stdin)
    }
}
