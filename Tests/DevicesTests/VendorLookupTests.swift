import Devices
import DomainMatch
import SystemIO
import TestSupport
import Testing

@Suite struct VendorLookupTests {
    static let header = "Registry,Assignment,Organization Name,Organization Address\n"

    /// A registry in a scratch directory: small files in the IEEE's CSV form, written here.
    func registry(oui: String = "", mam: String = "", oui36: String = "", iab: String? = nil) throws -> ScratchDirectory
    {
        let scratch = try ScratchDirectory()
        try scratch.write("oui.csv", Self.header + oui)
        try scratch.write("mam.csv", Self.header + mam)
        try scratch.write("oui36.csv", Self.header + oui36)
        if let iab { try scratch.write("iab.csv", Self.header + iab) }
        return scratch
    }

    let oui = """
        MA-L,B827EB,Raspberry Pi Foundation,Mitchell Wood House Caldecote Cambridgeshire GB CB23 7NU
        MA-L,3C22FB,"Apple, Inc.",1 Infinite Loop Cupertino CA US 95014
        MA-L,70B3D5,IEEE Registration Authority,445 Hoes Lane Piscataway NJ US 08554
        MA-L,001122,"CIMSYS ""Quoted"" Inc","Unit 4, Second Street
        Springfield ZZ 00000"
        MA-L,DCA632,Raspberry Pi Trading Ltd,Maurice Wilkes Building Cambridge GB CB4 0DS
        MA-L,ACBBCC,  Padded Name  ,Somewhere
        MA-L,XYZ123,Not Hex,Nowhere
        MA-L,0A1B2C,Local Bit Corp,Elsewhere

        """
    let mam = "MA-M,70B3D51,\"Example Sensors, Ltd.\",Street 1 City DE 12345\r\n"
    let oui36 = "MA-S,70B3D5123,Tiny Devices GmbH,Weg 2 Stadt DE 54321"

    @Test func quotedNamesWithCommasAndQuotes() throws {
        let scratch = try registry(oui: oui)
        let phone = mac("3c:22:fb:01:02:03")
        let quoted = mac("00:11:22:33:44:55")
        let after = mac("dc:a6:32:00:00:01")
        let vendors = VendorLookup(directory: scratch.path).vendors(for: [phone, quoted, after])
        #expect(vendors == [phone: "Apple, Inc.", quoted: "CIMSYS \"Quoted\" Inc", after: "Raspberry Pi Trading Ltd"])
    }

    @Test func theLongestAssignmentWins() throws {
        let scratch = try registry(oui: oui, mam: mam, oui36: oui36)
        let small = mac("70:b3:d5:12:34:56")  // MA-S 70B3D5123
        let medium = mac("70:b3:d5:1f:ff:ff")  // MA-M 70B3D51
        let large = mac("70:b3:d5:f0:00:00")  // only the MA-L
        let vendors = VendorLookup(directory: scratch.path).vendors(for: [small, medium, large])
        #expect(
            vendors == [
                small: "Tiny Devices GmbH", medium: "Example Sensors, Ltd.", large: "IEEE Registration Authority",
            ])
    }

    @Test func anIABBlockIsThirtySixBits() throws {
        let scratch = try registry(
            oui: "MA-L,0050C2,IEEE Registration Authority,Piscataway\n", iab: "IAB,0050C2ABC,Old Block Co,Here\n")
        let device = mac("00:50:c2:ab:c1:23")
        #expect(VendorLookup(directory: scratch.path).vendors(for: [device]) == [device: "Old Block Co"])
    }

    @Test func locallyAdministeredAddressesHaveNoVendor() throws {
        let scratch = try registry(oui: oui)
        // 0A-1B-2C is in the registry, but 0x0A has the U/L bit set: a private address.
        let private1 = mac("0a:1b:2c:00:00:01")
        let private2 = mac("da:a1:19:12:34:56")
        let pi = mac("b8:27:eb:12:34:56")
        #expect(private1.isLocallyAdministered && private2.isLocallyAdministered && !pi.isLocallyAdministered)
        let vendors = VendorLookup(directory: scratch.path).vendors(for: [private1, private2, pi])
        #expect(vendors == [pi: "Raspberry Pi Foundation"])
    }

    @Test func namesAreTrimmedAndRowsThatAreNotAssignmentsIgnored() throws {
        let scratch = try registry(oui: oui)
        let padded = mac("ac:bb:cc:00:00:01")
        let unknown = mac("12:34:56:00:00:01")
        let vendors = VendorLookup(directory: scratch.path).vendors(for: [padded, unknown])
        #expect(vendors == [padded: "Padded Name"])
    }

    @Test func missingFilesGiveNoVendorsNotAnError() throws {
        let pi = mac("b8:27:eb:12:34:56")
        #expect(VendorLookup(directory: "/nonexistent/ieee-data").vendors(for: [pi]) == [:])
        let scratch = try ScratchDirectory()
        try scratch.write("oui.csv", Self.header + oui)
        #expect(VendorLookup(directory: scratch.path).vendors(for: [pi]) == [pi: "Raspberry Pi Foundation"])
        #expect(VendorLookup(directory: scratch.path).vendors(for: []) == [:])
    }

    @Test func aRowAcrossTwoChunksIsReadWhole() throws {
        // Filler rows up to a few bytes before the 64 KiB chunk boundary, so the quoted
        // name with its comma is split between two reads.
        var text = ""
        var filler = 0
        while text.utf8.count < (64 << 10) - 20 {
            text += "MA-L,\(String(0x10_0000 + filler, radix: 16, uppercase: true)),Filler \(filler),Road\n"
            filler += 1
        }
        text += "MA-L,3C22FB,\"Apple, Inc.\",1 Infinite Loop Cupertino CA US 95014\n"
        let scratch = try ScratchDirectory()
        try scratch.write("oui.csv", text)
        let phone = mac("3c:22:fb:01:02:03")
        #expect(VendorLookup(directory: scratch.path).vendors(for: [phone]) == [phone: "Apple, Inc."])
    }

    @Test(.enabled(if: Allocations.counted, "a sanitizer's runtime owns malloc"))
    func theRegistryIsNeverHeldWhole() throws {
        // About 4 MB of rows; the lookup's biggest allocation is its 64 KiB chunk.
        var text = ""
        for index in 0..<60_000 {
            text +=
                "MA-L,\(String(0x20_0000 + index * 7, radix: 16, uppercase: true)),\"Vendor \(index), Inc.\",Street \(index) City ZZ\n"
        }
        text += "MA-L,3C22FB,\"Apple, Inc.\",1 Infinite Loop Cupertino CA US 95014\n"
        let scratch = try ScratchDirectory()
        try scratch.write("oui.csv", text)
        let phone = mac("3c:22:fb:01:02:03")
        var vendors: [MACAddress: String] = [:]
        let largest = Allocations.largest { vendors = VendorLookup(directory: scratch.path).vendors(for: [phone]) }
        #expect(vendors == [phone: "Apple, Inc."])
        #expect(largest <= 128 << 10)
    }

    static let installed = "/usr/share/ieee-data"
    static var hasRegistry: Bool { Files.exists(installed + "/oui.csv") }

    @Test(.enabled(if: hasRegistry, "the ieee-data package is not installed (scripts/install-deps --test installs it)"))
    func theInstalledRegistryNamesARaspberryPi() {
        let foundation = mac("b8:27:eb:12:34:56")
        let trading = mac("dc:a6:32:12:34:56")
        let randomised = mac("b6:27:eb:12:34:56")
        var vendors: [MACAddress: String] = [:]
        let largest = Allocations.largest {
            vendors = VendorLookup().vendors(for: [foundation, trading, randomised])
        }
        #expect(vendors[foundation]?.contains("Raspberry Pi") == true)
        #expect(vendors[trading]?.contains("Raspberry Pi") == true)
        #expect(vendors[randomised] == nil)
        if Allocations.counted { #expect(largest <= 128 << 10) }
    }
}
