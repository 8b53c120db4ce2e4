// TEMPORARY until DNSUpstream lands: fails every question.
import Config
import DNSProxy
import DNSWire
import EventLoop

final class TemporaryUpstream: UpstreamResolving {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }
    func resolve(_ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams: [UpstreamSpec]?,
                 completion: @escaping ([UInt8]?) -> Void) {
        loop.scheduleTimer(after: 1_000_000) { completion(nil) }
    }
}
