import ClientKit
import Foundation
import FriendsAPI
import MockServerTesting
import XCTest

/// The same kind of test written with XCTest: one server per test case, started in `setUp`, stopped in
/// `tearDown`.
final class FriendsAPIXCTests: XCTestCase {
  private var server: TestMockServer?

  override func setUp() async throws {
    server = try TestMockServer.start(fixtures: friendsFixtures)
  }

  override func tearDown() async throws {
    server?.stop()
    server = nil
  }

  func testListFriends() async throws {
    let server = try XCTUnwrap(server)
    let client = FriendsAPI.makeClient(baseURL: server.baseURL, token: "t0ken")
    let friends = try await client.send(FriendsEndpoint.listFriends())
    XCTAssertEqual(friends.map(\.id), [101, 102])
    XCTAssertNoThrow(
      try server.verify(count: 1, .get("/api/v1/friends").header("Authorization", "Bearer t0ken")))
  }

  func testConnectionResetIsReportedAsSuch() async throws {
    let server = try XCTUnwrap(server)
    try server.stub(.get("/api/v1/friends").willFail(with: "CONNECTION_RESET_BY_PEER"))
    let client = FriendsAPI.makeClient(baseURL: server.baseURL, token: "t0ken")
    do {
      _ = try await client.send(FriendsEndpoint.listFriends())
      XCTFail("expected a connection reset")
    } catch {
      guard case .connectionReset = error else { return XCTFail("expected .connectionReset, got \(error)") }
      XCTAssertEqual(FriendsAPI.message(for: error), "Check your connection and try again.")
    }
  }
}
