/// A friend as listed by ``FriendsEndpoint/listFriends(page:)``.
public struct Friend: Codable, Sendable, Hashable, Identifiable {
  /// The user id.
  public var id: Int
  /// The display name.
  public var name: String
  /// Whether the friend is online now.
  public var online: Bool
  /// The friendship score.
  public var score: Double

  /// Creates a friend.
  public init(id: Int, name: String, online: Bool, score: Double) {
    self.id = id
    self.name = name
    self.online = online
    self.score = score
  }
}

/// The answer to ``FriendsEndpoint/sendFriendRequest(to:)``.
public struct FriendRequestReceipt: Codable, Sendable, Hashable {
  /// The request's id, for cancelling it later.
  public var requestId: String
  /// `pending` until the other user answers.
  public var state: String

  /// Creates a receipt.
  public init(requestId: String, state: String) {
    self.requestId = requestId
    self.state = state
  }
}

/// The body of a friend request.
struct FriendRequestBody: Encodable, Sendable {
  var userId: Int
}

/// The answer to ``FriendsEndpoint/uploadAvatar(_:filename:contentType:caption:)``.
public struct AvatarReceipt: Codable, Sendable, Hashable {
  /// Where the uploaded picture is served.
  public var url: String
}
