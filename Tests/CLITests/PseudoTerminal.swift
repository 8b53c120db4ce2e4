import Foundation

/// A pseudo-terminal for a child's standard input and error, so that a test sees what a
/// person at a terminal would: the prompts, and whether what they type is echoed.
final class PseudoTerminal {
    let master: Int32
    /// The child's side; kept open so that its settings can be read after the child exits.
    let slave: Int32
    private(set) var transcript = ""

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        let libc = PTY.shared
        master = libc.openpt(O_RDWR | O_NOCTTY)
        var name = [CChar](repeating: 0, count: 128)
        guard master >= 0, libc.grantpt(master) == 0, libc.unlockpt(master) == 0,
            libc.ptsname(master, &name, name.count) == 0
        else { throw Failure(description: "no pseudo-terminal: \(String(cString: strerror(errno)))") }
        slave = open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw Failure(description: "cannot open the pseudo-terminal") }
    }

    deinit {
        close(master)
        close(slave)
    }

    /// Reads what the child writes to the terminal until `text` has appeared (true) or
    /// `timeout` seconds pass without it (false).
    func waitFor(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !transcript.contains(text) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(left * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { return false }
            transcript += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return true
    }

    /// Types `text` at the terminal.
    func type(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Whether the terminal echoes what is typed (ECHO in its local modes).
    var echoes: Bool {
        var settings = termios()
        tcgetattr(slave, &settings)
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// Starts `executable arguments…` with this terminal as standard input and error, and
    /// a pipe as standard output.
    func start(_ executable: String, _ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = terminal
        process.standardError = terminal
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        return (process, out)
    }
}

/// glibc's pseudo-terminal calls, which Swift's Glibc module leaves out (they need
/// `_XOPEN_SOURCE`), looked up in the C library at run time.
private struct PTY {
    typealias IntCall = @convention(c) (Int32) -> Int32
    typealias NameCall = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32
    let openpt: IntCall
    let grantpt: IntCall
    let unlockpt: IntCall
    let ptsname: NameCall

    static let shared: PTY = {
        let libc = dlopen(nil, RTLD_NOW)
        func symbol<T>(_ name: String, _: T.Type) -> T {
            guard let address = dlsym(libc, name) else { fatalError("no \(name) in the C library") }
            return unsafeBitCast(address, to: T.self)
        }
        return PTY(
            openpt: symbol("posix_openpt", IntCall.self), grantpt: symbol("grantpt", IntCall.self),
            unlockpt: symbol("unlockpt", IntCall.self), ptsname: symbol("ptsname_r", NameCall.self))
    }()
}
