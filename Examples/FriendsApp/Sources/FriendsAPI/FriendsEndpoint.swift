import ClientKit
import Foundation

/// The friends API: one place that knows every path, method and parameter. Each call is an
/// ``Endpoint`` whose generic parameter is the decoded payload (the client unwraps the
/// `{"status":"OK","result":…}` envelope, see ``FriendsAPI/makeClient(baseURL:token:refresh:appVersion:build:transport:retryPolicy:timeout:)``).
///
/// ```swift
/// let friends = try await client.send(FriendsEndpoint.listFriends())
/// let receipt = try await client.send(FriendsEndpoint.sendFriendRequest(to: 102))
/// ```
public enum FriendsEndpoint {
  /// `GET /api/v1/friends[?page=N]`: the signed-in user's friends.
  /// - Parameter page: the page to fetch (1-based), or nil for the first.
  public static func listFriends(page: Int? = nil) -> Endpoint<[Friend]> {
    Endpoint(
      .get, "/api/v1/friends", query: page.map { [URLQueryItem(name: "page", value: String($0))] } ?? [])
  }

  /// `POST /api/v1/friends/requests` with `{"userId": N}`: asks `userID` to become a friend. Not
  /// idempotent, so a failure after sending is never retried automatically.
  /// - Parameter userID: the user to invite.
  public static func sendFriendRequest(to userID: Int) -> Endpoint<FriendRequestReceipt> {
    Endpoint(.post, "/api/v1/friends/requests", body: .json(FriendRequestBody(userId: userID)))
  }
}
