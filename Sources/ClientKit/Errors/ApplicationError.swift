/// How an app should present an error to the user: the app renders the hint.
public enum PresentationHint: String, Sendable, Hashable, Codable {
  /// A modal alert that the user dismisses.
  case alert
  /// A transient message that disappears by itself.
  case toast
  /// Nothing to show (for example a cancelled call).
  case none
}

/// A failure reported by the backend inside a response envelope (`"status": "NG"`, a failing `code`),
/// whatever the HTTP status.
public struct ApplicationError: Sendable, Hashable, CustomStringConvertible {
  /// The backend's error code as text (`"E_TOKEN_EXPIRED"`, `"500"`), or nil when the envelope has none.
  public var code: String?
  /// The backend's message for people, or nil.
  public var message: String?
  /// How to present it; chosen by the envelope (default `.alert`).
  public var presentation: PresentationHint

  /// Creates an application error.
  public init(code: String?, message: String?, presentation: PresentationHint = .alert) {
    self.code = code
    self.message = message
    self.presentation = presentation
  }

  /// `message (code)` form.
  public var description: String {
    switch (message, code) {
    case (let m?, let c?): return "\(m) (\(c))"
    case (let m?, nil): return m
    case (nil, let c?): return "application error \(c)"
    case (nil, nil): return "application error"
    }
  }
}
