import ClientKit
import Foundation
import HTTPCore
import MockServer
import MockServerTesting
import Synchronization
import TestSupport
import Testing

// Shared helpers of the contract suite: ClientKit against a real MockServer (in-process or the binary).

/// The repository root (three levels above this file).
let repositoryRoot = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The bundled example API (`Fixtures/`).
let bundledFixtures = repositoryRoot.appendingPathComponent("Fixtures").path

/// The two transports the contract holds for.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case socket
  case urlSession

  var testDescription: String { rawValue }

  func make() -> any Transport {
    switch self {
    case .socket: return SocketTransport()
    case .urlSession: return URLSessionTransport()
    }
  }
}

/// A client for `server` over `transport`; no retries unless asked, retry waits recorded, not slept.
func makeClient(
  _ baseURL: URL, _ transport: any Transport, envelope: (any ResponseEnvelope)? = nil,
  defaultHeaders: HTTPHeaders = ["Accept": "application/json"],
  defaultQueryItems: @escaping @Sendable () -> [URLQueryItem] = { [] },
  authentication: Authentication = .none, adapters: [any RequestAdapter] = [],
  retryPolicy: RetryPolicy = .never, cache: ResponseCache? = nil, timeout: Duration = .seconds(5),
  totalTimeout: Duration? = nil, sleeps: SleepRecorder = SleepRecorder()
) -> APIClient {
  APIClient(
    baseURL: baseURL, defaultHeaders: defaultHeaders, defaultQueryItems: defaultQueryItems,
    envelope: envelope, authentication: authentication, adapters: adapters, retryPolicy: retryPolicy,
    transport: transport, cache: cache, timeout: timeout, totalTimeout: totalTimeout,
    sleep: { try await sleeps.sleep($0) })
}

/// Runs `body` and returns the error it threw, or nil when it succeeded.
func apiError<T>(_ body: () async throws(APIError) -> T) async -> APIError? {
  do {
    _ = try await body()
    return nil
  } catch {
    return error
  }
}

/// Seconds of a duration, as a Double.
func seconds(_ d: Duration) -> Double {
  Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Runs `body` and returns its error and the time it took.
func timedError<T>(_ body: () async throws(APIError) -> T) async -> (APIError?, Double) {
  let start = ContinuousClock.now
  let error = await apiError(body)
  return (error, seconds(ContinuousClock.now - start))
}

/// The case of an ``APIError`` without its payload: an exhaustive switch, so a new case fails to compile
/// here instead of slipping through as "some error".
enum ErrorKind: String, Sendable {
  case timedOut, cannotConnect, connectionReset, emptyResponse, connectionLost, truncatedBody
  case malformedResponse, tlsFailure, transportFailure, unacceptableStatus, application, emptyBody
  case decoding, refreshFailed, invalidRequest, cancelled, deadlineExceeded, responseTooLarge
}

extension APIError {
  var kind: ErrorKind {
    switch self {
    case .timedOut: return .timedOut
    case .deadlineExceeded: return .deadlineExceeded
    case .responseTooLarge: return .responseTooLarge
    case .cannotConnect: return .cannotConnect
    case .connectionReset: return .connectionReset
    case .emptyResponse: return .emptyResponse
    case .connectionLost: return .connectionLost
    case .truncatedBody: return .truncatedBody
    case .malformedResponse: return .malformedResponse
    case .tlsFailure: return .tlsFailure
    case .transportFailure: return .transportFailure
    case .unacceptableStatus: return .unacceptableStatus
    case .application: return .application
    case .emptyBody: return .emptyBody
    case .decoding: return .decoding
    case .refreshFailed: return .refreshFailed
    case .invalidRequest: return .invalidRequest
    case .cancelled: return .cancelled
    }
  }
}

/// Records retry delays instead of sleeping, so retry tests take no wall time.
final class SleepRecorder: Sendable {
  private let delays = Mutex<[Duration]>([])
  var recorded: [Duration] { delays.withLock { $0 } }
  func sleep(_ d: Duration) async throws {
    delays.withLock { $0.append(d) }
    try Task.checkCancellation()
  }
}

/// A thread-safe list of values, for progress callbacks and refresh calls.
final class Recorder<T: Sendable>: Sendable {
  private let values = Mutex<[T]>([])
  var all: [T] { values.withLock { $0 } }
  func append(_ value: T) { values.withLock { $0.append(value) } }
}

// MARK: - Models of the bundled example API

/// An entry of `GET /api/v1/friends`.
struct Friend: Decodable, Sendable, Equatable {
  var id: Int
  var name: String
  var online: Bool
  var score: Double
}

/// `POST /api/v1/friends/requests` result.
struct FriendRequestReceipt: Decodable, Sendable, Equatable {
  var requestId: String
  var state: String
}

/// `GET /api/v2/users/{id}` payload.
struct User: Decodable, Sendable, Equatable {
  var id: Int
  var name: String
  var email: String
  var balance: Double
}

/// A payload of in-process stubs: `{"id": …}`.
struct Item: Codable, Sendable, Equatable {
  var id: Int
}

/// The body of `POST /api/v1/friends/requests`.
struct FriendRequestBody: Encodable, Sendable {
  var userId: Int
}

/// The friends list: bearer token, `{"status","result"}` envelope.
func friendsList(page: Int? = nil) -> Endpoint<[Friend]> {
  Endpoint(.get, "/api/v1/friends", query: page.map { [URLQueryItem(name: "page", value: "\($0)")] } ?? [])
}

/// The client of the friends API of the bundled fixtures.
func friendsClient(
  _ baseURL: URL, _ kind: TransportKind, token: String? = "demo-token", timeout: Duration = .seconds(5)
) -> APIClient {
  makeClient(
    baseURL, kind.make(), envelope: StatusResultEnvelope(),
    authentication: token.map { .bearer(BearerTokenAuthenticator(token: $0)) } ?? .none, timeout: timeout)
}

/// The client of the users API of the bundled fixtures: Basic credentials, `{"code","data","info"}`.
func usersClient(
  _ baseURL: URL, _ kind: TransportKind, password: String = "s3cret"
) -> APIClient {
  makeClient(
    baseURL, kind.make(), envelope: CodeDataEnvelope(),
    authentication: .basic(username: "admin", password: password))
}

/// Starts an in-process server with the bundled fixtures.
func startWithBundledFixtures() throws -> TestMockServer {
  try TestMockServer.start(fixtures: bundledFixtures)
}

/// A JSON string literal for `s`.
func jsonLiteral(_ s: String) -> String {
  var out = "\""
  for scalar in s.unicodeScalars {
    switch scalar {
    case "\"": out += "\\\""
    case "\\": out += "\\\\"
    case "\n": out += "\\n"
    case "\r": out += "\\r"
    case "\t": out += "\\t"
    default:
      if scalar.value < 0x20 {
        out += String(format: "\\u%04x", scalar.value)
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
  }
  return out + "\""
}

/// A new fixtures directory under the temporary directory, with empty `mappings` and `__files`, for a test
/// that launches the binary with `--fixtures`; the caller removes it.
func temporaryFixtures(_ prefix: String) throws -> URL {
  let fixtures = FileManager.default.temporaryDirectory.appendingPathComponent(
    "\(prefix)-\(UUID().uuidString)")
  for folder in ["mappings", "__files"] {
    try FileManager.default.createDirectory(
      at: fixtures.appendingPathComponent(folder), withIntermediateDirectories: true)
  }
  return fixtures
}
