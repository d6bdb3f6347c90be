import Foundation
import HTTPCore
import Mappings
import MockJSON
import PactMatching

/// Provider verification with a pact file (`mockserver verify --pact`): each interaction's request is sent
/// to the provider and its answer compared with the interaction's response and rules as Pact's verifier
/// compares them (status, expected headers present, body with its rules; fields the provider adds are
/// fine).
package enum PactVerification {
  /// One interaction to replay.
  package struct Case: Sendable {
    /// The interaction's description.
    package var description: String
    /// Provider states, each `{"name": …, "params": {…}}`.
    package var providerStates: [JSONValue]
    /// The request to send, or nil with the reason it cannot be sent.
    package var request: ExampleRequest?
    /// Why the interaction is not replayed, or nil.
    package var skipped: String?
    let response: PactResponseExpectation?
  }

  /// The HTTP interactions of `pact`.
  /// - Throws: ``PactImportError`` naming the interaction and JSON path of a rule that cannot be honoured.
  package static func cases(from pact: JSONValue) throws(PactImportError) -> [Case] {
    guard let interactions = pact["interactions"]?.arrayValue else {
      throw PactImportError(path: "$.interactions", message: "expected an array of interactions")
    }
    let version = PactImporter.specificationVersion(pact)
    var out: [Case] = []
    for (k, interaction) in interactions.enumerated() {
      let base = "$.interactions[\(k)]"
      let description = interaction["description"]?.stringValue ?? "interaction \(k)"
      if let type = interaction["type"]?.stringValue, type != "Synchronous/HTTP" {
        out.append(
          Case(
            description: description, providerStates: [], request: nil,
            skipped: "a \(type) interaction is not HTTP", response: nil))
        continue
      }
      guard let request = interaction["request"]?.objectValue,
        let response = interaction["response"]?.objectValue
      else {
        throw PactImportError(path: base, message: "expected request and response objects")
      }
      var states: [JSONValue] = []
      if let s = interaction["providerState"]?.stringValue {
        states.append(.object(JSONObject(pairs: [("name", .string(s))])))
      }
      states += interaction["providerStates"]?.arrayValue ?? []
      let expectation: PactRequestExpectation
      let answer: PactResponseExpectation
      do {
        expectation = try PactRequestExpectation(
          request: request, version: version, jsonPath: base + ".request")
        answer = try PactResponseExpectation(
          response: response, version: version, jsonPath: base + ".response")
      } catch {
        throw PactImportError(
          path: error.path, message: "interaction \(JSONValue.quoted(description)): \(error.message)")
      }
      var url = expectation.path.split(separator: "/", omittingEmptySubsequences: false)
        .map { PercentEncoding.pathSegment(String($0)) }.joined(separator: "/")
      if let query = expectation.query, !query.isEmpty {
        url +=
          "?"
          + query.flatMap { name, values in
            values.map { PercentEncoding.pathSegment(name) + "=" + PercentEncoding.pathSegment($0) }
          }.joined(separator: "&")
      }
      var body: String?
      var skipped: String?
      if case .present(let bytes, _) = expectation.body {
        if let text = String(validating: bytes, as: UTF8.self) {
          body = text
        } else {
          skipped = "its request body is binary (\(bytes.count) bytes), which verify cannot send yet"
        }
      }
      let headers = expectation.headers.flatMap { name, values in
        values.count > 1 && PactHeaderComparison.isList(name)
          ? [(name, values.joined(separator: ", "))] : values.map { (name, $0) }
      }
      out.append(
        Case(
          description: description, providerStates: states,
          request: ExampleRequest(method: expectation.method, url: url, headers: headers, body: body),
          skipped: skipped, response: answer))
    }
    return out
  }

  /// What differs between the provider's answer and the interaction's response (empty: it honours the
  /// interaction).
  package static func compare(_ c: Case, status: Int, headers: HTTPHeaders, body: [UInt8]) -> [DriftFinding] {
    guard let response = c.response else { return [] }
    return response.mismatches(status: status, fields: headers.fields.map { ($0.name, $0.value) }, body: body)
      .map { m in
        let kind: DriftFinding.Kind
        switch m.part {
        case "status": kind = .status
        case "header": kind = m.location.lowercased() == "content-type" ? .contentType : .value
        default:
          if m.message.contains("Expected a body of") {
            kind = .contentType
          } else if m.message.contains("missing") {
            kind = .missingKey
          } else if m.message.contains("type") {
            kind = .type
          } else {
            kind = .value
          }
        }
        let path = m.part == "body" ? m.location : m.location.isEmpty ? m.part : "\(m.part) \(m.location)"
        return DriftFinding(kind: kind, path: path, message: m.message)
      }
  }

  /// The provider-state set-up call Pact's verifier makes: `POST` with `{"state", "params", "action"}`.
  package static func stateSetupBody(_ state: JSONValue) -> String {
    JSONValue.object(
      JSONObject(pairs: [
        ("state", state["name"] ?? .string("")), ("params", state["params"] ?? .object(JSONObject())),
        ("action", .string("setup")),
      ])
    ).serialized()
  }
}
