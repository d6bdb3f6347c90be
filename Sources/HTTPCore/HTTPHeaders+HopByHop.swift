extension HTTPHeaders {
  /// Hop-by-hop field names, lowercased (RFC 9110 §7.6.1, and the proxy authentication fields of §11.7):
  /// meaningful for one connection only, so a proxy does not forward them.
  package static let hopByHopNames: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "trailer",
    "proxy-authorization", "proxy-authenticate",
  ]

  /// These fields without hop-by-hop ones and those named in the `Connection` field (RFC 9110 §7.6.1):
  /// what a proxy forwards. Names are compared case-insensitively in place: lowercasing every field name
  /// into a new string (twice per proxied request, the request's and the response's fields) was a sixth of
  /// a proxied request's instructions.
  package var endToEnd: HTTPHeaders {
    let named = listElements("Connection")
    return HTTPHeaders(
      fields.filter { field in
        !HTTPHeaders.hopByHopNames.contains { $0.equalsIgnoringASCIICase(field.name) }
          && !named.contains { $0.equalsIgnoringASCIICase(field.name) }
      }.map { ($0.name, $0.value) })
  }
}
