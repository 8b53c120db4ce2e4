/// One entry of the question section (RFC 1035 §4.1.2).
public struct DNSQuestion: Hashable, Sendable, CustomStringConvertible {
    public var name: DNSName
    public var type: DNSType
    public var dnsClass: DNSClass

    public init(name: DNSName, type: DNSType, dnsClass: DNSClass = .in) {
        self.name = name
        self.type = type
        self.dnsClass = dnsClass
    }

    /// `example.com IN A`, for logs.
    public var description: String { "\(name) \(dnsClass) \(type)" }
}

extension DNSReader {
    public mutating func readQuestion() throws(DNSWireError) -> DNSQuestion {
        let name = try readName()
        let type = DNSType(try readUInt16())
        let dnsClass = DNSClass(try readUInt16())
        return DNSQuestion(name: name, type: type, dnsClass: dnsClass)
    }

    /// Reads `count` questions. The caller decides what count it accepts (the proxy takes
    /// exactly one, docs/dns.md#hostile-input); `DNSHeader.validateCounts` has already bounded `count` by
    /// the packet length, so the reservation below cannot be inflated by a hostile header.
    public mutating func readQuestions(count: Int) throws(DNSWireError) -> [DNSQuestion] {
        section = .question
        var questions: [DNSQuestion] = []
        questions.reserveCapacity(count)
        for _ in 0..<count { questions.append(try readQuestion()) }
        return questions
    }
}

extension DNSWriter {
    public mutating func writeQuestion(_ question: DNSQuestion, compress: Bool = true) {
        writeName(question.name, compress: compress)
        writeUInt16(question.type.rawValue)
        writeUInt16(question.dnsClass.rawValue)
    }
}
