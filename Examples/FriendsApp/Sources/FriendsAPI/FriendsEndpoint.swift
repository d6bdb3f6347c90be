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

  /// `POST /api/v1/me/avatar`: uploads the signed-in user's picture as `multipart/form-data` (RFC 7578)
  /// with a `caption` field and an `avatar` file part. Pass `uploadProgress` to
  /// `client.response(_:uploadProgress:)` to show a progress bar.
  /// - Parameters:
  ///   - image: the image bytes.
  ///   - filename: the file name sent (default `avatar.png`).
  ///   - contentType: the image type (default `image/png`).
  ///   - caption: a text field sent with it.
  public static func uploadAvatar(
    _ image: Data, filename: String = "avatar.png", contentType: String = "image/png", caption: String = ""
  ) -> Endpoint<AvatarReceipt> {
    var form = MultipartFormData()
    form.append(caption, name: "caption")
    form.append(image, name: "avatar", filename: filename, contentType: contentType)
    return Endpoint(.post, "/api/v1/me/avatar", body: .multipart(form))
  }
}
