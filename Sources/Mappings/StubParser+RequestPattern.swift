import MockJSON

extension StubParser {
  /// Parses a bare WireMock request pattern (the body of `POST /__admin/requests/count`, `find`,
  /// `remove` and `near-misses/request-pattern`): the same fields and matchers as a stub's `request`.
  /// - Parameters:
  ///   - json: the pattern object.
  ///   - file: file name for the problems (empty for admin input).
  ///   - location: JSON path of the pattern (default `$`).
  /// - Returns: the pattern (nil when it has errors) and every problem found.
  public static func parseRequestPattern(_ json: JSONValue, file: String = "", location: String = "$")
    -> (RequestPattern?, [FixtureProblem])
  {
    var d = Diagnostics(file: file)
    let pattern = parseRequest(json, location, &d)
    return (d.errorCount == 0 ? pattern : nil, d.problems)
  }
}
