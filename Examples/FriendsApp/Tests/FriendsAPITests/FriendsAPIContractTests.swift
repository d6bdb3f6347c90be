import ClientKit
import Foundation
import FriendsAPI
import MockServerTesting
import Synchronization
import Testing

/// This example's fixtures (`Examples/FriendsApp/Fixtures`, in the package root next to `Sources/` and
/// `Tests/`): copy the folder into your package root.
let friendsFixtures = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  .appendingPathComponent("Fixtures").path

/// Contract tests of the friends API: the real client code against a mock server started in-process
/// for each test (its own port, stubs and journal, so the tests run in parallel).
@Suite("FriendsAPI contract")
struct FriendsAPIContractTests {
  let server: TestMockServer

  init() throws {
    server = try TestMockServer.start(fixtures: friendsFixtures)
  }

  func client(
    token: String? = "t0ken", timeout: Duration = .seconds(5), totalTimeout: Duration? = nil,
    logger: CurlLogger? = nil
  ) -> APIClient {
    FriendsAPI.makeClient(
      baseURL: server.baseURL, token: token, appVersion: "2.4.1", build: "311", timeout: timeout,
      totalTimeout: totalTimeout, logger: logger)
  }

  @Test func avatarUploadIsMultipartAndLogged() async throws {
    defer { server.stop() }
    let lines = Lines()
    let image = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0) })
    let receipt = try await client(logger: CurlLogger { lines.append($0) })
      .send(FriendsEndpoint.uploadAvatar(image, caption: "me"))
    #expect(receipt.url.hasSuffix("/avatars/me.png"))
    let logged = try #require(server.requests.last?.request)
    let body = Data(logged.body)
    #expect(body.range(of: Data(#"name="avatar"; filename="avatar.png""#.utf8)) != nil)
    #expect(body.range(of: image) != nil)
    let curl = try #require(lines.all.first)
    #expect(curl.contains("curl -X POST"))
    #expect(curl.contains("'Authorization: <redacted>'"))
    #expect(!curl.contains("t0ken"))
  }

  @Test func listFriendsDecodesTheEnvelopePayload() async throws {
    defer { server.stop() }
    let friends = try await client().send(FriendsEndpoint.listFriends())
    #expect(friends.map(\.name) == ["Aiko", "Bruno"])
    #expect(friends.first == Friend(id: 101, name: "Aiko", online: true, score: 12.5))
    // What the app sent: its token and the default query items.
    try server.verify(
      count: 1,
      .get("/api/v1/friends").header("Authorization", "Bearer t0ken").query("app_version", "2.4.1")
        .query("build", "311"))
  }

  @Test func pageOutOfRangeIsAnApplicationError() async throws {
    defer { server.stop() }
    do {
      _ = try await client().send(FriendsEndpoint.listFriends(page: 999))
      Issue.record("expected an application error")
    } catch {
      guard case .application(let failure, let response) = error else {
        Issue.record("expected .application, got \(error)")
        return
      }
      #expect(response.statusCode == 200)
      #expect(failure.message == "page out of range")
      #expect(FriendsAPI.message(for: error) == "page out of range")
    }
  }

  @Test func signedOutGets401WithTheBackendMessage() async throws {
    defer { server.stop() }
    do {
      _ = try await client(token: nil).send(FriendsEndpoint.listFriends())
      Issue.record("expected a 401")
    } catch {
      guard case .unacceptableStatus(let response, let failure?) = error else {
        Issue.record("expected .unacceptableStatus, got \(error)")
        return
      }
      #expect(response.statusCode == 401)
      #expect(error.isUnauthorized)
      #expect(failure.message == "authentication required")
    }
  }

  @Test func sendFriendRequestPostsTheUserID() async throws {
    defer { server.stop() }
    let receipt = try await client().send(FriendsEndpoint.sendFriendRequest(to: 102))
    #expect(receipt == FriendRequestReceipt(requestId: "fr-7781", state: "pending"))
    try server.verify(
      count: 1,
      .post("/api/v1/friends/requests").header("Content-Type", "application/json")
        .body(matcher: #"{"equalToJson":{"userId":102}}"#))
  }

  @Test func befriendingYourselfIsRefusedInTheEnvelope() async throws {
    defer { server.stop() }
    do {
      _ = try await client().send(FriendsEndpoint.sendFriendRequest(to: 1))
      Issue.record("expected an application error")
    } catch {
      guard case .application(let failure, _) = error else {
        Issue.record("expected .application, got \(error)")
        return
      }
      #expect(failure.message == "you cannot befriend yourself")
    }
  }

  @Test func stubsWrittenInSwiftOverrideTheFixtures() async throws {
    defer { server.stop() }
    // A maintenance window: a stub added by the test outranks the fixture of equal priority.
    try server.stub(
      .get("/api/v1/friends").willReturn(
        status: 503, json: #"{"status":"NG","message":"maintenance"}"#, headers: [("Retry-After", "120")]))
    do {
      _ = try await client().send(FriendsEndpoint.listFriends())
      Issue.record("expected a 503")
    } catch {
      guard case .unacceptableStatus(let response, _) = error else {
        Issue.record("expected .unacceptableStatus, got \(error)")
        return
      }
      #expect(response.statusCode == 503)
      #expect(error.retryAfter == .seconds(120))
      #expect(FriendsAPI.message(for: error) == "maintenance")
    }
    // After a reset only the fixtures answer again.
    server.reset()
    #expect(try await client().send(FriendsEndpoint.listFriends()).count == 2)
  }

  @Test func aSlowServerIsATimeoutAndGETsAreRetried() async throws {
    defer { server.stop() }
    try server.stub(
      .get("/api/v1/friends").willReturn(json: #"{"status":"OK","result":[]}"#, delayMilliseconds: 5000))
    do {
      _ = try await client(timeout: .milliseconds(500), totalTimeout: .seconds(10)).send(
        FriendsEndpoint.listFriends())
      Issue.record("expected a timeout")
    } catch {
      guard case .deadlineExceeded(let report) = error else {
        Issue.record("expected .deadlineExceeded, got \(error)")
        return
      }
      #expect(report.attemptLimit == .milliseconds(500))
      #expect(report.attempts == 3)
      #expect(FriendsAPI.message(for: error) == "The server is taking too long to answer.")
    }
    // The default retry policy sent the GET twice more, each attempt with its own 0.5 s deadline, inside
    // the 10 s overall deadline (by default the overall deadline is the 0.5 s itself: one attempt).
    try server.verify(count: 3, .get("/api/v1/friends"))
  }

  @Test func aPOSTThatTimesOutIsNotRetried() async throws {
    defer { server.stop() }
    try server.stub(
      .post("/api/v1/friends/requests").willReturn(
        json: #"{"status":"OK","result":{"requestId":"x","state":"pending"}}"#, delayMilliseconds: 5000))
    do {
      _ = try await client(timeout: .milliseconds(500)).send(FriendsEndpoint.sendFriendRequest(to: 102))
      Issue.record("expected a timeout")
    } catch {
      guard case .timedOut = error else {
        Issue.record("expected .timedOut, got \(error)")
        return
      }
    }
    // Not retried: the server saw one POST.
    try server.verify(count: 1, .post("/api/v1/friends/requests"))
  }
}

/// A thread-safe list of log lines.
final class Lines: Sendable {
  private let lines = Mutex<[String]>([])
  var all: [String] { lines.withLock { $0 } }
  func append(_ line: String) { lines.withLock { $0.append(line) } }
}
