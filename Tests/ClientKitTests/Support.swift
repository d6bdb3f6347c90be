import ClientKit
import Foundation
import HTTPCore
import Synchronization

struct User: Codable, Sendable, Equatable {
  var id: Int
  var name: String
}

/// `GET /users/{id}` answering a ``User``.
struct GetUser: Request {
  typealias Response = User
  let id: Int
  var path: String { "/users/\(id)" }
}

let baseURL = URL(string: "http://api.test/v1")!

/// A stub response with a JSON body.
func reply(_ status: Int, _ body: String = "", headers: HTTPHeaders = [:]) -> TransportResponse {
  TransportResponse(statusCode: status, headers: headers, body: Data(body.utf8))
}

/// A client over `transport` with instant retries.
func makeClient(
  _ transport: any Transport, envelope: (any ResponseEnvelope)? = nil,
  authentication: Authentication = .none, adapters: [any RequestAdapter] = [],
  retryPolicy: RetryPolicy = .never, cache: ResponseCache? = nil,
  defaultQueryItems: @escaping @Sendable () -> [URLQueryItem] = { [] },
  sleeps: SleepRecorder = SleepRecorder()
) -> APIClient {
  APIClient(
    baseURL: baseURL, defaultQueryItems: defaultQueryItems, envelope: envelope,
    authentication: authentication, adapters: adapters, retryPolicy: retryPolicy,
    transport: transport, cache: cache, sleep: { try await sleeps.sleep($0) })
}

/// Records retry delays instead of sleeping.
final class SleepRecorder: Sendable {
  private let delays = Mutex<[Duration]>([])
  var recorded: [Duration] { delays.withLock { $0 } }
  func sleep(_ d: Duration) async throws {
    delays.withLock { $0.append(d) }
    try Task.checkCancellation()
  }
}

/// A thread-safe counter.
final class Counter: Sendable {
  private let value = Mutex(0)
  @discardableResult func increment() -> Int {
    value.withLock {
      $0 += 1
      return $0
    }
  }
  var count: Int { value.withLock { $0 } }
}

extension APIError {
  /// The case name, for table-driven checks.
  var caseName: String {
    switch self {
    case .timedOut: return "timedOut"
    case .deadlineExceeded: return "deadlineExceeded"
    case .responseTooLarge: return "responseTooLarge"
    case .cannotConnect: return "cannotConnect"
    case .connectionReset: return "connectionReset"
    case .emptyResponse: return "emptyResponse"
    case .connectionLost: return "connectionLost"
    case .truncatedBody: return "truncatedBody"
    case .malformedResponse: return "malformedResponse"
    case .tlsFailure: return "tlsFailure"
    case .transportFailure: return "transportFailure"
    case .unacceptableStatus: return "unacceptableStatus"
    case .application: return "application"
    case .emptyBody: return "emptyBody"
    case .decoding: return "decoding"
    case .refreshFailed: return "refreshFailed"
    case .invalidRequest: return "invalidRequest"
    case .cancelled: return "cancelled"
    }
  }
}

/// Runs `body` and returns the APIError it throws, or nil when it succeeds.
func apiError<T>(_ body: () async throws(APIError) -> T) async -> APIError? {
  do {
    _ = try await body()
    return nil
  } catch {
    return error
  }
}
