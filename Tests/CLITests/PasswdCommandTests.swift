import Foundation
import Passwords
import TestSupport
import Testing

/// `phosra-gate passwd`, the real binary: what it prints verifies with the library, each
/// run draws its own salt, bad input fails with one line, and the password never shows.
@Suite(.blocking) struct PasswdCommandTests {
    /// Everything a run printed, for the check that the password is not in it.
    static func printed(_ output: ProgramOutput) -> String { output.stdout + output.stderr }

    @Test func hashesTheFirstLineOfStandardInput() throws {
        let output = try GateCommand.run(["passwd"], stdin: "correct horse battery\n")
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.isEmpty)
        #expect(output.lines.count == 1)
        let hash = try #require(output.lines.first)
        #expect(hash.hasPrefix("$scrypt$ln=14,r=8,p=1$"))
        let stored = try StoredPassword(hash)
        #expect(!stored.isPlain)
        #expect(stored.matches(Array("correct horse battery".utf8)))
        #expect(!stored.matches(Array("correct horse battery\n".utf8)))
        #expect(!Self.printed(output).contains("correct horse"))
    }

    @Test func twoRunsDrawTwoSalts() throws {
        let one = try GateCommand.run(["passwd"], stdin: "same password\n")
        let two = try GateCommand.run(["passwd"], stdin: "same password\n")
        #expect(one.status == 0 && two.status == 0)
        let salts = [one, two].map { $0.stdout.split(separator: "$").dropFirst(2).first }
        #expect(salts[0] != nil && salts[0] != salts[1])
        for output in [one, two] {
            #expect(
                try StoredPassword(output.stdout.trimmingCharacters(in: .newlines)).matches(Array("same password".utf8))
            )
        }
    }

    /// A CRLF line end and a missing line end are both fine; only the first line counts.
    @Test func lineEnds() throws {
        for (input, password) in [
            ("pw-one\r\n", "pw-one"), ("pw-two", "pw-two"), ("pw-three\nsecond line\n", "pw-three"),
        ] {
            let output = try GateCommand.run(["passwd"], stdin: input)
            #expect(output.status == 0, "\(input.debugDescription): \(output.stderr)")
            #expect(try StoredPassword(output.stdout.trimmingCharacters(in: .newlines)).matches(Array(password.utf8)))
        }
    }

    @Test func badInputFailsWithOneLineAndNoPassword() throws {
        let long = String(repeating: "x", count: StoredPassword.maxPasswordBytes + 1)
        let cases: [(stdin: String?, arguments: [String], error: String, secret: String?)] = [
            ("", [], "the password is empty", nil),
            ("\n", [], "the password is empty", nil),
            (nil, [], "the password is empty", nil),
            ("tab\there\n", [], "the password contains a control character", "tab"),
            (long + "\n", [], "the password is 1025 bytes long; at most 1024", "xxxxxxxx"),
            (long + long + "\n", [], "the password is longer than 1024 bytes", "xxxxxxxx"),
            ("x\n", ["hunter2"], "passwd takes no arguments; it reads the password on standard input", "hunter2"),
        ]
        for (stdin, arguments, error, secret) in cases {
            let output = try GateCommand.run(["passwd"] + arguments, stdin: stdin)
            #expect(output.status == 1, "\(arguments) \(String(describing: stdin))")
            #expect(output.stdout.isEmpty)
            #expect(output.stderr == "phosra-gate passwd: \(error)\n")
            if let secret { #expect(!Self.printed(output).contains(secret)) }
        }
    }

    @Test func helpAndUsage() throws {
        let help = try GateCommand.run(["passwd", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("usage: phosra-gate passwd"))
        let usage = try GateCommand.run(["help"])
        #expect(usage.stdout.contains("  passwd "))
    }

    /// At a terminal: asked twice, nothing typed is echoed, the terminal is put back.
    @Test func atATerminalItAsksTwiceWithoutEcho() throws {
        let terminal = try PseudoTerminal()
        #expect(terminal.echoes)
        let (process, out) = try terminal.start(GateRun.binary, ["passwd"])
        #expect(terminal.waitFor("Password: "))
        #expect(!terminal.echoes, "echo is off while the password is typed")
        terminal.type("typed secret\n")
        #expect(terminal.waitFor("Again: "))
        terminal.type("typed secret\n")
        let hash = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try StoredPassword(hash.trimmingCharacters(in: .newlines)).matches(Array("typed secret".utf8)))
        #expect(terminal.echoes, "the terminal is put back")
        #expect(!terminal.transcript.contains("typed secret"), "\(terminal.transcript)")
    }

    @Test func atATerminalTwoDifferentAnswersFail() throws {
        let terminal = try PseudoTerminal()
        let (process, out) = try terminal.start(GateRun.binary, ["passwd"])
        #expect(terminal.waitFor("Password: "))
        terminal.type("first answer\n")
        #expect(terminal.waitFor("Again: "))
        terminal.type("second answer\n")
        #expect(terminal.waitFor("phosra-gate passwd: the passwords do not match"))
        #expect(out.fileHandleForReading.readDataToEndOfFile().isEmpty)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(terminal.echoes)
        #expect(!terminal.transcript.contains("answer"), "\(terminal.transcript)")
    }
}
