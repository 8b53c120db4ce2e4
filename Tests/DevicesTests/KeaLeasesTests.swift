import Devices
import Testing

@Suite struct KeaLeasesTests {
    // Kea 2.4's DHCPv4 memfile: leases appended as they change, escapes for commas.
    let file = """
        address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
        192.168.1.23,aa:bb:cc:dd:ee:ff,01:aa:bb:cc:dd:ee:ff,3600,1765015200,1,0,0,laptop,0,,0
        192.168.1.24,3c:22:fb:01:02:03,,3600,1765015300,1,0,0,Smith&#x2c John's phone,0,{ "note": "a&#x2c b" },0
        192.168.1.25,b8:27:eb:12:34:56,,3600,1765015400,1,0,0,,0,,0
        192.168.1.26,dc:a6:32:00:00:01,,3600,1765015500,1,0,0,declined-one,1,,0
        192.168.1.27,,,3600,1765015600,1,0,0,,1,,0
        192.168.1.23,aa:bb:cc:dd:ee:ff,01:aa:bb:cc:dd:ee:ff,3600,1765019000,1,0,0,laptop,0,,0
        192.168.1.25,b8:27:eb:12:34:56,,0,1765015400,1,0,0,,0,,0
        192.168.1.28,00:11:22:33:44:55,,4294967295,6060000000,1,0,0,printer,0,,0
        192.168.1.29,00:11:22:33:44:66,,3600,1765015500,1,0,0,reclaimed,2,,0
        192.168.1.30,00:11:22:33:44:77,,3600,1765015500,1,0,0,cut-sh

        """

    @Test func theLastLineForAnAddressWinsAndOnlyHeldLeasesCount() {
        #expect(DHCPLeases.format(of: bytes(file)) == .kea)
        #expect(
            DHCPLeases.parse(bytes(file)) == [
                Lease(
                    mac: mac("aa:bb:cc:dd:ee:ff"), address: ip("192.168.1.23"), hostName: "laptop",
                    expires: 1_765_019_000),
                // `&#x2c` is a comma.
                Lease(
                    mac: mac("3c:22:fb:01:02:03"), address: ip("192.168.1.24"), hostName: "Smith, John's phone",
                    expires: 1_765_015_300),
                // An infinite lifetime: no end.
                Lease(mac: mac("00:11:22:33:44:55"), address: ip("192.168.1.28"), hostName: "printer", expires: nil),
            ])
    }

    @Test func aDeclinedLineWithoutHardwareAddressEndsTheEarlierLease() {
        let file = """
            address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
            192.168.1.27,aa:bb:cc:dd:ee:ff,,3600,1765015600,1,0,0,tablet,0,,0
            192.168.1.27,,,3600,1765015600,1,0,0,,1,,0
            """
        #expect(DHCPLeases.parse(bytes(file)) == [])
    }

    @Test func anOlderSchemaWithoutStateReads() {
        // Kea 1.0 wrote neither `state` nor `user_context`; the columns are found by name.
        let file = """
            address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname
            10.1.2.3,00:0c:29:aa:bb:cc,,7200,1765015200,1,0,0,nas
            """
        #expect(
            DHCPLeases.parse(bytes(file)) == [
                Lease(mac: mac("00:0c:29:aa:bb:cc"), address: ip("10.1.2.3"), hostName: "nas", expires: 1_765_015_200)
            ])
    }

    @Test func theDHCPv6FileReadsItsHardwareAddressAndSkipsPrefixes() {
        let file = """
            address,duid,valid_lifetime,expire,subnet_id,pref_lifetime,lease_type,iaid,prefix_len,fqdn_fwd,fqdn_rev,hostname,hwaddr,state,user_context,hwtype,hwaddr_source,pool_id
            fd00::23,00:01:00:01:2c:5e:6f:70:aa:bb:cc:dd:ee:ff,3600,1765015200,1,1800,0,1234,128,0,0,phone,aa:bb:cc:dd:ee:ff,0,,1,2,0
            fd00:1::,00:01:00:01:2c:5e:6f:70:aa:bb:cc:dd:ee:ff,3600,1765015200,1,1800,2,1235,56,0,0,,aa:bb:cc:dd:ee:ff,0,,1,2,0
            fd00::24,00:03:00:01:3c:22:fb:01:02:03,3600,1765015200,1,1800,0,99,128,0,0,no-hw,,0,,1,2,0
            """
        #expect(
            DHCPLeases.parse(bytes(file)) == [
                Lease(mac: mac("aa:bb:cc:dd:ee:ff"), address: ip("fd00::23"), hostName: "phone", expires: 1_765_015_200)
            ])
    }

    @Test func aTagWithoutTwoHexDigitsIsKeptAsItIs() {
        let file = """
            address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
            10.0.0.2,00:00:00:00:00:02,,3600,1765015200,1,0,0,a&#xzz&#x26b&#x,0,,0
            """
        #expect(DHCPLeases.parse(bytes(file)).first?.hostName == "a&#xzz&b&#x")
    }
}
