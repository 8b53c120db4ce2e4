import Glibc
import SystemIO

enum SystemIOWrite {
    static func write(_ path: String, _ bytes: [UInt8]) throws { try Files.writeAtomically(path, bytes) }
    static func remove(_ path: String) { unlink(path) }
}
