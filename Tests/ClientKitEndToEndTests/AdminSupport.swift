import ClientKit
import Foundation
import MockServerTesting

// Driving the real `mockserver` binary through its admin API (`/__admin`), with ClientKit itself.

/// An admin client for a server at `baseURL` (no envelope, no retries).
func adminClient(_ baseURL: URL) -> APIClient {
  APIClient(baseURL: baseURL, retryPolicy: .never, transport: SocketTransport(), timeout: .seconds(10))
}

extension MockServerProcess {
  /// Adds a stub mapping (`POST /__admin/mappings`).
  func stub(_ builder: StubBuilder) async throws {
    try await stub(json: builder.json)
  }

  /// Adds a stub mapping from its WireMock JSON.
  func stub(json: String) async throws {
    _ = try await adminClient(baseURL).send(
      Endpoint<EmptyResponse>(
        .post, "/__admin/mappings", body: .data(Data(json.utf8), contentType: "application/json")))
  }

  /// The journal's logged requests (`GET /__admin/requests`), newest first, as JSON objects.
  func loggedRequests() async throws -> [[String: Any]] {
    let data = try await adminClient(baseURL).send(Endpoint<Data>(.get, "/__admin/requests"))
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    return (object?["requests"] as? [[String: Any]] ?? []).compactMap { $0["request"] as? [String: Any] }
  }
}
