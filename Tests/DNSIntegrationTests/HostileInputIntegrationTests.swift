import Foundation
import TestSupport
import Testing

/// What a client can send cannot crash the daemon or grow its memory without bound.
@Suite(.serialized, .blocking) struct HostileInputIntegrationTests {
    @Test func randomAndMalformedPacketsLeaveItAnswering() throws {
        let scratch = try ScratchDirectory()
        let policy = try scratch.write("p.json", PolicyDocuments.json(blocked: ["blocked.example"]))
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        let gate = try GateRun(
            [
                "--policy", policy, "--lists", scratch.path("lists"), "--upstream", "127.0.0.1:9",
                "--rate-limit", "0",
            ], scratch: scratch)
        #expect(try gate.dig("blocked.example").status == "NXDOMAIN")
        let before = gate.daemon.residentBytes
        var random = SystemRandomNumberGenerator()
        let valid = RawSockets.query("www.blocked.example", id: 7)
        for round in 0..<10 {
            var packets: [[UInt8]] = []
            for index in 0..<2500 {
                switch index % 5 {
                case 0:
                    packets.append(
                        (0..<Int.random(in: 0...600, using: &random)).map { _ in
                            UInt8.random(in: 0...255, using: &random)
                        })
                case 1: packets.append(Array(valid.prefix(Int.random(in: 0..<valid.count, using: &random))))
                case 2:
                    // A compression pointer to itself, and one past the end.
                    packets.append(Array(valid.prefix(12)) + [0xC0, 12, 0, 1, 0, 1])
                    packets.append(Array(valid.prefix(12)) + [0xC0, 0xFF, 0, 1, 0, 1])
                case 3:
                    var huge = valid
                    huge[4] = 0xFF
                    huge[5] = 0xFF
                    huge[6] = 0xFF
                    huge[7] = 0xFF
                    packets.append(huge)
                default:
                    var mutated = valid
                    mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(
                        in: 0...255, using: &random)
                    packets.append(mutated)
                }
            }
            RawSockets.udpSend(packets, port: gate.port)
            _ = RawSockets.tcpPipeline(Array(packets.prefix(20 + round)), port: gate.port, timeout: 1)
            #expect(gate.daemon.isRunning)
        }
        #expect(try gate.dig("blocked.example").status == "NXDOMAIN", "still answering")
        #expect(try gate.dig("blocked.example", "A", ["+tcp"]).status == "NXDOMAIN")
        let growth = gate.daemon.residentBytes - before
        #expect(growth < 32 << 20, "resident memory grew by \(growth >> 20) MiB")
    }

    @Test func tcpQueriesArePipelined() throws {
        let scratch = try ScratchDirectory()
        let policy = try scratch.write("p.json", PolicyDocuments.json(level: "light", blocked: ["blocked.example"]))
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        let gate = try GateRun(
            ["--policy", policy, "--lists", scratch.path("lists"), "--upstream", "127.0.0.1:9"], scratch: scratch)
        let names = (0..<20).map { index in index % 2 == 0 ? "n\(index).blocked.example" : "x\(index).adult.example" }
        let answers = RawSockets.tcpPipeline(
            names.enumerated().map { RawSockets.query($1, id: UInt16(100 + $0)) }, port: gate.port)
        #expect(answers.count == 20)
        let ids: Set<UInt16> = Set(
            answers.map { (answer: [UInt8]) -> UInt16 in UInt16(answer[0]) << 8 | UInt16(answer[1]) })
        let expected: Set<UInt16> = Set((0..<20).map { (index: Int) -> UInt16 in UInt16(100 + index) })
        #expect(ids == expected)
        #expect(answers.allSatisfy { $0[3] & 0x0F == 3 }, "every answer NXDOMAIN")
    }
}
