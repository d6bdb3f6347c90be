import COpenSSL
import NativeSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The client-side OpenSSL context for upstream HTTPS (proxy stubs, recording, `mockserver verify`):
/// TLS 1.2+, ALPN `http/1.1`, server certificates verified against the system trust store plus the CAs of
/// `--proxy-ca FILE`, host names checked (RFC 6125) — or nothing verified with `--proxy-insecure`.
///
/// Invariant (why `@unchecked Sendable` is sound): the `SSL_CTX` is configured in `init` and never changed
/// afterwards; OpenSSL allows `SSL_new` from it on many threads at once. Freed once, in `deinit`, after
/// every ``TLSByteStream`` that retains this object is gone.
package final class UpstreamTLSContext: @unchecked Sendable {
  let ctx: OpaquePointer
  /// False with `--proxy-insecure`.
  let verifiesPeer: Bool

  /// Creates the context.
  /// - Parameters:
  ///   - caFile: a PEM file of extra trusted CAs (`--proxy-ca`), or nil.
  ///   - insecure: accept any server certificate (`--proxy-insecure`).
  /// - Throws: ``TLSError`` when the CA file cannot be read or OpenSSL cannot set up.
  package init(caFile: String? = nil, insecure: Bool = false) throws(TLSError) {
    if let problem = OpenSSLLibrary.loadProblem { throw TLSError("load OpenSSL", detail: problem) }
    OpenSSLErrors.clear()
    guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw .openSSL("SSL_CTX_new") }
    self.ctx = ctx
    verifiesPeer = !insecure
    _ = cossl_ctx_set_default_options(ctx)
    _ = cossl_ctx_set_nonblocking_modes(ctx)
    guard cossl_set_min_proto(ctx, TLS1_2_VERSION) == 1 else { throw .openSSL("minimum TLS version") }
    let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
    _ = SSL_CTX_set_alpn_protos(ctx, alpn, UInt32(alpn.count))
    if insecure {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
    } else {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
      _ = SSL_CTX_set_default_verify_paths(ctx)
      OpenSSLErrors.clear()
      if let caFile {
        guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else {
          throw TLSError("load --proxy-ca \(caFile)", detail: OpenSSLErrors.drain())
        }
      }
    }
  }

  deinit { SSL_CTX_free(ctx) }

  /// The context with the system trust store and no extra CA, made once on first use (loading the trust
  /// store is the costly part): webhooks and `mockserver verify` share it.
  package static let system = Result { () throws(TLSError) in try UpstreamTLSContext() }

  /// True for an IPv4 or IPv6 literal (no SNI is sent for those; RFC 6066 §3).
  static func isIPAddress(_ host: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
  }
}
