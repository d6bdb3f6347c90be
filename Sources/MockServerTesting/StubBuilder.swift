import Foundation
import Mappings
import MockJSON
import MockServer

/// A request pattern written in Swift; renders WireMock's request pattern JSON.
public struct RequestPatternBuilder: Sendable {
  var members: [(String, String)]

  init(method: String, urlKey: String, url: String) {
    members = [("method", jsonString(method)), (urlKey, jsonString(url))]
  }

  /// `GET` with `urlPath` equal to `path` (query not compared).
  public static func get(_ path: String) -> RequestPatternBuilder {
    .init(method: "GET", urlKey: "urlPath", url: path)
  }
  /// `POST` with `urlPath` equal to `path`.
  public static func post(_ path: String) -> RequestPatternBuilder {
    .init(method: "POST", urlKey: "urlPath", url: path)
  }
  /// `PUT` with `urlPath` equal to `path`.
  public static func put(_ path: String) -> RequestPatternBuilder {
    .init(method: "PUT", urlKey: "urlPath", url: path)
  }
  /// `DELETE` with `urlPath` equal to `path`.
  public static func delete(_ path: String) -> RequestPatternBuilder {
    .init(method: "DELETE", urlKey: "urlPath", url: path)
  }
  /// Any method (`ANY`) with `urlPath` equal to `path`.
  public static func any(_ path: String) -> RequestPatternBuilder {
    .init(method: "ANY", urlKey: "urlPath", url: path)
  }
  /// `method` with `urlPathPattern` (a regular expression over the whole path).
  public static func matching(_ method: String, pathPattern: String) -> RequestPatternBuilder {
    .init(method: method, urlKey: "urlPathPattern", url: pathPattern)
  }

  /// Adds `headers.name.equalTo = value`.
  public func header(_ name: String, _ value: String) -> RequestPatternBuilder {
    adding("headers", name, #"{"equalTo":\#(jsonString(value))}"#)
  }
  /// Adds `headers.name` with a raw WireMock matcher JSON, e.g. `{"matches":"Bearer .+"}`.
  public func header(_ name: String, matcher: String) -> RequestPatternBuilder {
    adding("headers", name, matcher)
  }
  /// Adds `queryParameters.name.equalTo = value`.
  public func query(_ name: String, _ value: String) -> RequestPatternBuilder {
    adding("queryParameters", name, #"{"equalTo":\#(jsonString(value))}"#)
  }
  /// Adds `queryParameters.name` with a raw WireMock matcher JSON.
  public func query(_ name: String, matcher: String) -> RequestPatternBuilder {
    adding("queryParameters", name, matcher)
  }
  /// Adds a body pattern, raw WireMock matcher JSON such as `{"equalToJson":{"id":1}}`.
  public func body(matcher: String) -> RequestPatternBuilder {
    var copy = self
    if let index = copy.members.firstIndex(where: { $0.0 == "bodyPatterns" }) {
      copy.members[index].1 = String(copy.members[index].1.dropLast()) + "," + matcher + "]"
    } else {
      copy.members.append(("bodyPatterns", "[" + matcher + "]"))
    }
    return copy
  }

  private func adding(_ group: String, _ name: String, _ matcher: String) -> RequestPatternBuilder {
    var copy = self
    let entry = jsonString(name) + ":" + matcher
    if let index = copy.members.firstIndex(where: { $0.0 == group }) {
      copy.members[index].1 = String(copy.members[index].1.dropLast()) + "," + entry + "}"
    } else {
      copy.members.append((group, "{" + entry + "}"))
    }
    return copy
  }

  /// The WireMock request pattern JSON.
  public var json: String { "{" + members.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}" }

  func compiled() throws -> RequestPattern {
    let stubJSON = #"{"request":\#(json),"response":{"status":200}}"#
    let value: JSONValue
    do {
      value = try JSONValue.parse(stubJSON)
    } catch {
      throw TestMockServerError.invalidStub("\(error)")
    }
    let (stub, problems) = StubParser.parse(
      value, file: "pattern", context: StubParsingContext(makeID: { "pattern" }))
    guard let stub else { throw TestMockServerError.invalidStub(FixtureLoader.report(problems)) }
    return stub.request
  }

  /// Completes a stub with a response.
  /// - Parameters:
  ///   - status: status code.
  ///   - json: body, sent with `Content-Type: application/json` (nil for none).
  ///   - headers: more response header fields, in order.
  ///   - delayMilliseconds: `fixedDelayMilliseconds`.
  public func willReturn(
    status: Int = 200, json body: String? = nil, headers: [(String, String)] = [],
    delayMilliseconds: Int? = nil
  ) -> StubBuilder {
    var response: [(String, String)] = [("status", String(status))]
    var allHeaders = headers
    if let body {
      if !allHeaders.contains(where: { $0.0.lowercased() == "content-type" }) {
        allHeaders.insert(("Content-Type", "application/json"), at: 0)
      }
      response.append(("body", jsonString(body)))
    }
    if !allHeaders.isEmpty {
      response.append(
        (
          "headers",
          "{" + allHeaders.map { jsonString($0.0) + ":" + jsonString($0.1) }.joined(separator: ",") + "}"
        ))
    }
    if let delayMilliseconds { response.append(("fixedDelayMilliseconds", String(delayMilliseconds))) }
    return StubBuilder(request: self, response: response)
  }

  /// Completes a stub with a network fault (`CONNECTION_RESET_BY_PEER`, `EMPTY_RESPONSE`, `NO_RESPONSE`…).
  public func willFail(with fault: String, delayMilliseconds: Int? = nil) -> StubBuilder {
    var response = [("fault", jsonString(fault))]
    if let delayMilliseconds { response.append(("fixedDelayMilliseconds", String(delayMilliseconds))) }
    return StubBuilder(request: self, response: response)
  }

  /// Completes a stub with a raw WireMock response definition JSON object.
  public func willReturn(responseJSON: String) -> StubBuilder {
    StubBuilder(request: self, response: [], rawResponse: responseJSON)
  }
}

/// A complete stub written in Swift: a request pattern and its response. Renders WireMock JSON.
public struct StubBuilder: Sendable {
  let request: RequestPatternBuilder
  let response: [(String, String)]
  var rawResponse: String?
  var extra: [(String, String)] = []

  init(request: RequestPatternBuilder, response: [(String, String)], rawResponse: String? = nil) {
    self.request = request
    self.response = response
    self.rawResponse = rawResponse
  }

  /// Sets `priority` (1 is highest, default 5).
  public func priority(_ value: Int) -> StubBuilder {
    var copy = self
    copy.extra.append(("priority", String(value)))
    return copy
  }

  /// Makes the stub part of a scenario (WireMock semantics, starting state `Started`).
  public func scenario(_ name: String, requiredState: String? = nil, newState: String? = nil) -> StubBuilder {
    var copy = self
    copy.extra.append(("scenarioName", jsonString(name)))
    if let requiredState { copy.extra.append(("requiredScenarioState", jsonString(requiredState))) }
    if let newState { copy.extra.append(("newScenarioState", jsonString(newState))) }
    return copy
  }

  /// The WireMock stub mapping JSON.
  public var json: String {
    let responseJSON =
      rawResponse ?? "{" + response.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    let members = [("request", request.json), ("response", responseJSON)] + extra
    return "{" + members.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
  }
}

/// A JSON string literal for `s`.
func jsonString(_ s: String) -> String {
  JSONValue.string(s).serialized()
}

extension StubBuilder {
  /// Starts a stub for `GET path` (so `server.stub(.get("/a").willReturn(...))` reads naturally).
  public static func get(_ path: String) -> RequestPatternBuilder { .get(path) }
  /// Starts a stub for `POST path`.
  public static func post(_ path: String) -> RequestPatternBuilder { .post(path) }
  /// Starts a stub for `PUT path`.
  public static func put(_ path: String) -> RequestPatternBuilder { .put(path) }
  /// Starts a stub for `DELETE path`.
  public static func delete(_ path: String) -> RequestPatternBuilder { .delete(path) }
  /// Starts a stub for any method on `path`.
  public static func any(_ path: String) -> RequestPatternBuilder { .any(path) }
}
