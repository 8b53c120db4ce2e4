import Gateway
import Glibc
import Passwords
import SystemIO

/// `phosra-gate passwd`: reads one password on standard input and prints the hash that
/// `proxy_password` takes (docs/proxy.md#proxy-authentication). The password itself is
/// never printed, not even in an error.
enum PasswdCommand: Command {
    static let name = "passwd"
    static let summary = "read a password on standard input, print its hash for proxy_password"
    static let usage = """
        usage: phosra-gate passwd < FILE
          Reads one password (the first line of standard input; on a terminal it asks twice,
          without echo) and prints its scrypt hash for proxy_password.
        """

    /// Why no hash is printed. No case holds the password.
    enum Problem: Error, CustomStringConvertible {
        case arguments
        case password(PasswordError)
        case lineTooLong
        case mismatch
        case read(errno: Int32)
        case terminal(errno: Int32)

        var description: String {
            switch self {
            // An operand may well be the password typed on the command line: never echo it.
            case .arguments: "passwd takes no arguments; it reads the password on standard input"
            case .password(let error): error.description
            case .lineTooLong: "the password is longer than \(StoredPassword.maxPasswordBytes) bytes"
            case .mismatch: "the passwords do not match"
            case .read(let code): "reading standard input: \(String(cString: strerror(code)))"
            case .terminal(let code): "setting up the terminal: \(String(cString: strerror(code)))"
            }
        }
    }

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            guard words.isEmpty else { throw Problem.arguments }
            let password = try isatty(0) != 0 ? TerminalInput.askTwice() : readLine(from: 0)
            do {
                try StoredPassword.check(password)
                console.out(try StoredPassword.hash(password))
            } catch {
                throw Problem.password(error)
            }
            return 0
        } catch {
            console.err("phosra-gate passwd: \(error)")
            return 1
        }
    }

    /// The first line of `fd` without its line end (`\n` or `\r\n`); up to end of input
    /// when there is no line end. Reads a byte at a time so that nothing after the line is
    /// taken from the file descriptor.
    static func readLine(from fd: Int32) throws(Problem) -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(fd, &byte, 1)
            if count < 0 {
                if errno == EINTR { continue }
                throw .read(errno: errno)
            }
            if count == 0 || byte == 0x0A { break }
            // One more than the limit for a `\r` before the `\n`.
            guard line.count <= StoredPassword.maxPasswordBytes else { throw .lineTooLong }
            line.append(byte)
        }
        if line.last == 0x0D { line.removeLast() }
        return line
    }
}

/// Asking for a password on a terminal: echo off (the line end still echoes), asked
/// twice, and the terminal put back as it was, also when a signal ends the command.
enum TerminalInput {
    /// The terminal's settings before echo was turned off, for the signal handler, which
    /// can capture nothing. Allocated once and never freed.
    nonisolated(unsafe) private static let saved = UnsafeMutablePointer<termios>.allocate(capacity: 1)

    static func askTwice() throws(PasswdCommand.Problem) -> [UInt8] {
        guard tcgetattr(0, saved) == 0 else { throw .terminal(errno: errno) }
        var quiet = saved.pointee
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        let restore: @convention(c) (Int32) -> Void = { signal in
            tcsetattr(0, TCSAFLUSH, TerminalInput.saved)
            _exit(128 + signal)
        }
        let signals = [SIGINT, SIGTERM, SIGQUIT, SIGHUP]
        for number in signals { Glibc.signal(number, restore) }
        guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else { throw .terminal(errno: errno) }
        defer {
            tcsetattr(0, TCSAFLUSH, saved)
            for number in signals { Glibc.signal(number, SIG_DFL) }
        }
        prompt("Password: ")
        let first = try PasswdCommand.readLine(from: 0)
        // An empty first answer is refused at once rather than asked for again.
        guard !first.isEmpty else { return first }
        prompt("Again: ")
        guard try PasswdCommand.readLine(from: 0) == first else { throw .mismatch }
        return first
    }

    /// On stderr, so that stdout holds nothing but the hash (`passwd > hash.txt`).
    private static func prompt(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
