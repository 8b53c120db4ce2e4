/// A share of the device requests failing at random, for runs too long to script each
/// fault by hand (the soak): the API as an unreliable network and server see it.
extension FakePhosraAPI {
    /// Draws which device requests misbehave: each request to `GET /device/policy`,
    /// `POST /device/report` or `POST /device/ack` that has no injected fault waiting fails
    /// with probability `share`, as one of `faults` chosen at random. Seeded, so a run can
    /// be replayed.
    public struct FaultShare: Sendable {
        public let share: Double
        public let faults: [Fault]
        var generator: SeededGenerator
        /// Device requests seen and faults drawn so far.
        public private(set) var requests = 0
        public private(set) var drawn: [Fault] = []

        public init(share: Double, faults: [Fault], seed: UInt64) {
            precondition((0...1).contains(share) && !faults.isEmpty, "a share in 0...1 of at least one fault")
            self.share = share
            self.faults = faults
            generator = SeededGenerator(seed: seed)
        }

        static let deviceEndpoints: Set<Endpoint> = [.policy, .report, .ack]

        /// The fault for one request to `endpoint`, nil when it is to succeed.
        public mutating func draw(for endpoint: Endpoint) -> Fault? {
            guard Self.deviceEndpoints.contains(endpoint) else { return nil }
            requests += 1
            guard Double.random(in: 0..<1, using: &generator) < share else { return nil }
            let fault = faults.randomElement(using: &generator)!
            drawn.append(fault)
            return fault
        }
    }

    /// While set, device requests fail at random (see `FaultShare`); nil to stop. Reading it
    /// gives the counts so far.
    public var faultShare: FaultShare? {
        get { locked { $0.faultShare } }
        set { locked { $0.faultShare = newValue } }
    }
}
