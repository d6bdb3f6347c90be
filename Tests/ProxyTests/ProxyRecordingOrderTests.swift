import Dispatch
import HTTPCore
import Synchronization
import TestSupport
import Testing

@testable import MockServer

/// When a relayed exchange is recorded, against what the client can already see. A client that got the
/// whole answer may send its next request at once (the next of a repeated request, or a recording stop):
/// that request must find this exchange recorded, or a scenario's answers come out swapped and a stop
/// loses the last exchange.
@Suite("Proxy recording order")
struct ProxyRecordingOrderTests {
  /// The content bytes queued so far, and how many exchanges the recorder held when the last one was.
  struct Seen {
    var bytes = 0
    var recordedAtLastByte: Int?
    var ended = false
  }

  @Test func aStreamedLengthFramedAnswerIsRecordedBeforeItsLastBytesReachTheConnection() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    // Larger than what is relayed whole, so the content is streamed through a StreamedBody.
    let size = 4 * ProxyForwarder.wholeRelayBytes
    let forwarder = ProxyForwarder(configuration: ProxyConfiguration())
    let seen = Mutex(Seen())
    let done = DispatchSemaphore(value: 0)
    let request = HTTPRequest(
      head: HTTPRequestHead(method: .get, target: "/big?size=\(size)", headers: HTTPHeaders([("Host", "x")])),
      body: [])
    forwarder.forward(
      request, proxy: ProxyDefinition(baseURL: "http://127.0.0.1:\(upstream.port)"), journalID: "order"
    ) { outcome in
      guard let body = outcome.streamed else {
        seen.withLock { $0.ended = true }
        done.signal()
        return
      }
      // Stands in for the connection: the wake runs on the producer's thread as it queues bytes, so what
      // the recorder holds is read before the producer can go on past the write of the last bytes.
      let taken = body.attach {
        while true {
          let (bytes, end) = body.take(maxBytes: .max)
          let recorded = forwarder.recorder.recent.count
          let finished = seen.withLock { s -> Bool in
            s.bytes += bytes.count
            if s.bytes == size, !bytes.isEmpty { s.recordedAtLastByte = recorded }
            if end != nil { s.ended = true }
            return end != nil
          }
          if finished { done.signal() }
          if bytes.isEmpty || finished { return }
        }
      }
      #expect(!taken, "nothing is queued before the first write")
    }
    #expect(done.wait(timeout: .now() + 60) == .success, "the exchange did not end")
    let result = seen.withLock { $0 }
    #expect(result.bytes == size, "\(result)")
    #expect(result.ended)
    #expect(result.recordedAtLastByte == 1, "recorded exchanges when the last bytes were queued: \(result)")
    #expect(forwarder.recorder.recent.count == 1)
  }
}
