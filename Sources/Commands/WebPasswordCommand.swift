import Gateway
import Glibc
import ParentPage
import Passwords
import SystemIO

/// `phosra-gate web-password`: sets the password of the parent's page
/// (docs/parent-page.md#setting-up). Reads it like `passwd` (standard input; on a terminal,
/// asked twice without echo), stores its scrypt hash in the state directory (0600), and
/// ends every session of the page. A running `run` starts the page within a second.
enum WebPasswordCommand: Command {
    static let name = "web-password"
    static let summary = "set the password of the parent's page (standard input)"
    static let usage = """
        usage: phosra-gate web-password [--config FILE] < FILE
          Reads one password (the first line of standard input; on a terminal it asks twice,
          without echo), keeps its hash for the parent's page, and ends every open session.
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let arguments = try Arguments(command: words, flags: [:])
            guard arguments.operands.isEmpty else {
                console.err("phosra-gate web-password: \(PasswdCommand.Problem.arguments)")
                return 1
            }
            let settings = try arguments.configuredSettings()
            let state = arguments.stateDirectory(settings)
            let password: [UInt8]
            do {
                password = try isatty(0) != 0 ? TerminalInput.askTwice() : PasswdCommand.readLine(from: 0)
                try StoredPassword.check(password)
            } catch let problem as PasswdCommand.Problem {
                console.err("phosra-gate web-password: \(problem)")
                return 1
            } catch {
                console.err("phosra-gate web-password: \(error)")
                return 1
            }
            let hash = try StoredPassword.hash(password)
            do {
                try Files.makeDirectories(state, mode: 0o755)
                try WebPassword.write(hash: hash, stateDirectory: state)
            } catch {
                console.err("phosra-gate web-password: \(state)/\(WebPassword.fileName): \(error)")
                return 1
            }
            // Every session carries a tag of the password it was opened with: this one ends them
            // all, and the page forgets each at its next request.
            console.out("the page's password is set; every open session has ended")
            return 0
        } catch {
            console.err("phosra-gate web-password: \(error)")
            return 1
        }
    }
}
