import Foundation
import Synchronization

/// Holds the bearer token and refreshes it after a 401, once for all requests that saw the same token
/// rejected.
///
/// Rules (each one closes a known failure of retry-on-401 interceptors):
/// - Refreshes are keyed by the rejected token. While a refresh is running, every other request rejected
///   with the same token waits for it instead of starting another one.
/// - A request rejected with a token that has already been replaced is simply retried with the new one.
/// - A failed refresh fails every request that was rejected with that token, once, and is remembered: a
///   late 401 for the same token fails at once instead of refreshing again. Only ``setToken(_:)`` (a new
///   login) clears the failure.
/// - The refresh closure runs with ``isRefreshing`` set, and requests made from inside it never trigger a
///   refresh themselves, so the refresh call cannot loop through the 401 logic.
/// - A credential with a known expiry (``TokenCredential/expiresAt``) is refreshed *before* a request is
///   sent once it is within ``refreshWindow`` of expiring (Alamofire's `requiresRefresh`), through the same
///   single-flight refresh; if that refresh fails the request goes out with the old token and the 401 that
///   follows fails at once with ``APIError/refreshFailed(response:reason:)``.
public final class BearerTokenAuthenticator: Sendable {
  /// Fetches a new access token; receives the token the server rejected (nil if there was none).
  /// Throwing means the refresh failed.
  public typealias Refresh = @Sendable (_ rejectedToken: String?) async throws -> String
  /// Fetches a new credential (token and expiry); receives the token being replaced (nil if none).
  /// Throwing means the refresh failed.
  public typealias CredentialRefresh = @Sendable (_ rejectedToken: String?) async throws -> TokenCredential

  private struct State {
    var token: String?
    var expiresAt: Date?
    var inFlight: Task<String, any Error>?
    var failure: (token: String?, reason: String)?
    var refreshCount = 0
  }

  private let state: Mutex<State>
  private let refresh: CredentialRefresh?
  /// How long before ``expiresAt`` the credential counts as needing a refresh.
  public let refreshWindow: Duration
  private let now: @Sendable () -> Date

  /// True inside the refresh closure (a task-local), where requests never trigger another refresh.
  @TaskLocal public static var isRefreshing = false

  /// Creates an authenticator.
  /// - Parameters:
  ///   - token: the current access token, or nil when logged out.
  ///   - refresh: fetches a new token after a 401, or nil to never refresh (401 is then reported as is).
  public init(token: String?, refresh: Refresh? = nil) {
    self.state = Mutex(State(token: token))
    if let refresh {
      self.refresh = { @Sendable rejected in TokenCredential(token: try await refresh(rejected)) }
    } else {
      self.refresh = nil
    }
    self.refreshWindow = .zero
    self.now = { Date() }
  }

  /// Creates an authenticator for a credential whose expiry is known.
  /// - Parameters:
  ///   - credential: the current credential, or nil when logged out.
  ///   - refreshWindow: a credential expiring within this time is refreshed before the next request is
  ///     sent (default 60 s; negative counts as zero).
  ///   - now: the clock, for tests.
  ///   - refresh: fetches a new credential (proactively, or after a 401), or nil to never refresh.
  public init(
    credential: TokenCredential?, refreshWindow: Duration = .seconds(60),
    now: @escaping @Sendable () -> Date = { Date() }, refresh: CredentialRefresh?
  ) {
    self.state = Mutex(State(token: credential?.token, expiresAt: credential?.expiresAt))
    self.refresh = refresh
    self.refreshWindow = max(.zero, refreshWindow)
    self.now = now
  }

  /// The current access token, or nil.
  public var token: String? { state.withLock { $0.token } }

  /// When the current token expires, when known.
  public var expiresAt: Date? { state.withLock { $0.expiresAt } }

  /// True when there is a token with a known expiry within ``refreshWindow`` from now and a refresh
  /// closure to renew it.
  public var requiresRefresh: Bool {
    guard refresh != nil, let expiry = state.withLock({ s in s.token == nil ? nil : s.expiresAt }) else {
      return false
    }
    let window =
      Double(refreshWindow.components.seconds) + Double(refreshWindow.components.attoseconds) / 1e18
    return now().addingTimeInterval(window) >= expiry
  }

  /// The token to send now: refreshed first (once for all concurrent callers) when ``requiresRefresh``,
  /// outside a refresh closure. A failed refresh is remembered for the old token (see the type's rules)
  /// and the old token is returned.
  public func validToken() async -> String? {
    guard requiresRefresh, !Self.isRefreshing else { return token }
    let current = token
    if let fresh = try? await token(replacing: current) { return fresh }
    return token
  }

  /// Whether a refresh closure is configured; without one a 401 is reported as it is.
  public var canRefresh: Bool { refresh != nil }

  /// How many refreshes have been started since creation.
  public var refreshCount: Int { state.withLock { $0.refreshCount } }

  /// Replaces the token (after a login or logout) and forgets any failed refresh.
  public func setToken(_ token: String?) {
    state.withLock {
      $0.token = token
      $0.expiresAt = nil
      $0.failure = nil
    }
  }

  /// Replaces the credential (after a login or logout) and forgets any failed refresh.
  public func setCredential(_ credential: TokenCredential?) {
    state.withLock {
      $0.token = credential?.token
      $0.expiresAt = credential?.expiresAt
      $0.failure = nil
    }
  }

  private enum Step {
    case use(String)
    case wait(Task<String, any Error>)
    case fail(String)
  }

  /// Returns a token to retry with after the server rejected `rejected`, refreshing at most once for it.
  /// - Parameter rejected: the token the rejected request carried (nil if none).
  /// - Returns: the new token.
  /// - Throws: ``RefreshFailure`` with the reason when the refresh failed now or earlier for the same
  ///   token, or when there is no refresh closure.
  public func token(replacing rejected: String?) async throws(RefreshFailure) -> String {
    let step = state.withLock { s -> Step in
      if let current = s.token, current != rejected { return .use(current) }
      if let failure = s.failure, failure.token == rejected { return .fail(failure.reason) }
      if let running = s.inFlight { return .wait(running) }
      guard let refresh else { return .fail("no token refresh is configured") }
      s.refreshCount += 1
      let task = Task { [self] in try await runRefresh(refresh, rejected: rejected) }
      s.inFlight = task
      return .wait(task)
    }
    switch step {
    case .use(let token):
      return token
    case .fail(let reason):
      throw RefreshFailure(reason: reason)
    case .wait(let task):
      do {
        return try await task.value
      } catch {
        throw RefreshFailure(reason: Self.reason(error))
      }
    }
  }

  private func runRefresh(_ refresh: CredentialRefresh, rejected: String?) async throws -> String {
    do {
      let fresh = try await Self.$isRefreshing.withValue(true) { try await refresh(rejected) }
      state.withLock {
        $0.token = fresh.token
        $0.expiresAt = fresh.expiresAt
        $0.failure = nil
        $0.inFlight = nil
      }
      return fresh.token
    } catch {
      let reason = Self.reason(error)
      state.withLock {
        $0.failure = (rejected, reason)
        $0.inFlight = nil
      }
      throw RefreshFailure(reason: reason)
    }
  }

  private static func reason(_ error: any Error) -> String {
    if let failure = error as? RefreshFailure { return failure.reason }
    if let api = error as? APIError { return api.description }
    return String(describing: error)
  }
}

/// Why a token refresh failed.
public struct RefreshFailure: Error, Sendable, Hashable {
  /// The reason, in words (the refresh call's error description).
  public var reason: String
  /// Creates a failure.
  public init(reason: String) { self.reason = reason }
}

/// An access token and, when the server said, when it expires (Alamofire's `AuthenticationCredential`).
public struct TokenCredential: Sendable, Hashable {
  /// The access token.
  public var token: String
  /// When it stops being accepted, or nil when unknown (then only a 401 triggers a refresh).
  public var expiresAt: Date?

  /// Creates a credential.
  public init(token: String, expiresAt: Date? = nil) {
    self.token = token
    self.expiresAt = expiresAt
  }

  /// A credential from an OAuth 2.0 token response's `expires_in` (seconds from `issuedAt`, RFC 6749 §5.1);
  /// a negative or non-finite value is ignored (expiry unknown).
  public init(token: String, expiresIn seconds: Double?, issuedAt: Date = Date()) {
    self.token = token
    if let seconds, seconds.isFinite, seconds >= 0, seconds <= 10 * 365 * 86_400 {
      self.expiresAt = issuedAt.addingTimeInterval(seconds)
    } else {
      self.expiresAt = nil
    }
  }
}
