import ClientKit
import Contracts
import Dispatch
import Foundation
import HTTPCore

/// Sends one request to the provider with ClientKit's socket transport (HTTP and HTTPS, no redirects
/// followed, one deadline, 20 s by default), blocking the calling thread: the command line is synchronous.
enum UpstreamClient {
  /// Status, headers and body, or a one-line reason (connection refused, timeout…).
  static func send(base: String, _ request: ExampleRequest, timeoutMilliseconds: Int = 20_000) -> Result<
    (Int, HTTPHeaders, [UInt8]), UpstreamFailure
  > {
    guard let url = URL(string: base + request.url) else {
      return .failure(UpstreamFailure(message: "not a URL: \(base + request.url)"))
    }
    var headers = HTTPHeaders()
    for (name, value) in request.headers { headers.add(name: name, value: value) }
    let transportRequest = TransportRequest(
      method: HTTPMethod(rawValue: request.method), url: url, headers: headers,
      body: Data((request.body ?? "").utf8), timeout: .milliseconds(timeoutMilliseconds))
    let box = ResultBox()
    let done = DispatchSemaphore(value: 0)
    Task {
      let transport = SocketTransport(followsRedirects: false)
      do throws(APIError) {
        let response = try await transport.send(transportRequest, progress: nil)
        box.set(.success((response.statusCode, response.headers, Array(response.body))))
      } catch {
        box.set(.failure(UpstreamFailure(message: "\(error)")))
      }
      done.signal()
    }
    done.wait()
    return box.get()
  }

  /// The result handed from the task to the waiting thread (written once before the semaphore is
  /// signalled, read after it: the lock makes that visible).
  final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<(Int, HTTPHeaders, [UInt8]), UpstreamFailure> = .failure(
      UpstreamFailure(message: "no answer"))
    func set(_ v: Result<(Int, HTTPHeaders, [UInt8]), UpstreamFailure>) { lock.withLock { value = v } }
    func get() -> Result<(Int, HTTPHeaders, [UInt8]), UpstreamFailure> { lock.withLock { value } }
  }
}

/// Why the provider gave no answer.
struct UpstreamFailure: Error, CustomStringConvertible {
  /// E.g. `connection refused`.
  var message: String
  var description: String { message }
}
