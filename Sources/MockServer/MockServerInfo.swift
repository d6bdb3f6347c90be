/// MockServer library namespace.
public enum MockServerInfo {
  /// Version printed by `mockserver --version`.
  public static let version = "0.1.0"
}
