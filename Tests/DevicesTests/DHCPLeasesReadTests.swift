import Devices
import Glibc
import SystemIO
import TestSupport
import Testing

@Suite struct DHCPLeasesReadTests {
    @Test func readsAFileInAnyFormat() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("dnsmasq.leases", "1765015200 aa:bb:cc:dd:ee:ff 192.168.1.23 laptop *\n")
        #expect(try DHCPLeases.read(path: path).map(\.hostName) == ["laptop"])
        let kea = try scratch.write(
            "kea-leases4.csv",
            """
            address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
            192.168.1.23,aa:bb:cc:dd:ee:ff,,3600,1765015200,1,0,0,laptop,0,,0

            """)
        #expect(try DHCPLeases.read(path: kea).map(\.hostName) == ["laptop"])
    }

    @Test func aMissingFileIsAnErrorNamingIt() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("absent.leases")
        #expect(throws: DevicesError.unreadable(path: path, SystemError("open", errno: ENOENT, subject: path))) {
            try DHCPLeases.read(path: path)
        }
        do {
            _ = try DHCPLeases.read(path: path)
        } catch {
            #expect("\(error)".contains(path))
        }
    }

    @Test func aFileOfNoKnownFormatIsUnrecognisedButHeaderCommentsAreNoLeases() throws {
        let scratch = try ScratchDirectory()
        let wrong = try scratch.write("hosts", "127.0.0.1 localhost\n::1 localhost\n")
        #expect(throws: DevicesError.unrecognised(path: wrong)) { try DHCPLeases.read(path: wrong) }
        let fresh = try scratch.write(
            "dhcpd.leases", "# The format of this file is documented in the dhcpd.leases(5) manual page.\n\n")
        #expect(try DHCPLeases.read(path: fresh).isEmpty)
        #expect(try DHCPLeases.read(path: try scratch.write("empty.leases", "")).isEmpty)
    }

    @Test func aDirectoryIsUnreadable() throws {
        let scratch = try ScratchDirectory()
        let error = #expect(throws: DevicesError.self) { try DHCPLeases.read(path: scratch.path) }
        guard case .unreadable(let path, let cause) = error else {
            Issue.record("expected .unreadable, got \(String(describing: error))")
            return
        }
        #expect(path == scratch.path && cause.errno == EISDIR)
    }

    @Test func aTenMegabyteFileIsReadAndAFileOverTheLimitRefused() throws {
        let scratch = try ScratchDirectory()
        let line = "1765015200 02:00:00:00:00:01 10.0.0.1 phone *\n"
        let tenMegabytes = String(repeating: line, count: (10 << 20) / line.utf8.count)
        let ten = try scratch.write("ten.leases", tenMegabytes)
        // One address, written again and again: one lease.
        #expect(try DHCPLeases.read(path: ten).count == 1)
        let over = try scratch.write("over.leases", String(repeating: "#", count: DHCPLeases.maximumFileBytes + 1))
        #expect(throws: DevicesError.tooLarge(path: over, limit: DHCPLeases.maximumFileBytes)) {
            try DHCPLeases.read(path: over)
        }
    }
}
