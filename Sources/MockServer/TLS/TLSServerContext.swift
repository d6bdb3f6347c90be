import COpenSSL
import Foundation
import NativeSupport

/// A configured server-side OpenSSL context (`SSL_CTX`): certificate chain, private key, and optionally
/// the certificate authorities whose client certificates are required (mutual TLS). TLS 1.2 and 1.3.
///
/// Invariant (why `@unchecked Sendable` is sound): the `SSL_CTX` is fully configured in `init` and never
/// changed afterwards; OpenSSL allows creating `SSL` objects from one such context on many threads at
/// once. It is freed exactly once, in `deinit`, after every ``TLSByteStream`` that retains this object
/// is gone.
public final class TLSServerContext: @unchecked Sendable {
  let ctx: OpaquePointer
  /// True when client certificates are required and verified.
  public let requiresClientCertificate: Bool

  /// Configures a context from PEM text.
  /// - Parameters:
  ///   - certificateChainPEM: the server certificate, then any intermediates to send.
  ///   - privateKeyPEM: the server certificate's private key (unencrypted PEM).
  ///   - clientCertificateAuthorityPEM: one or more CA certificates; when given, every client must
  ///     present a certificate that chains to one of them, or the handshake fails.
  /// - Throws: ``TLSError`` for unreadable PEM, a key that does not match the certificate, or OpenSSL
  ///   failures.
  public init(
    certificateChainPEM: String, privateKeyPEM: String, clientCertificateAuthorityPEM: String? = nil
  ) throws(TLSError) {
    if let problem = OpenSSLLibrary.loadProblem { throw TLSError("load OpenSSL", detail: problem) }
    OpenSSLErrors.clear()
    guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw .openSSL("SSL_CTX_new") }
    self.ctx = ctx
    self.requiresClientCertificate = clientCertificateAuthorityPEM != nil
    // From here on `deinit` frees `ctx` if a later step throws.
    _ = cossl_ctx_set_default_options(ctx)
    _ = cossl_ctx_set_nonblocking_modes(ctx)
    guard cossl_set_min_proto(ctx, TLS1_2_VERSION) == 1 else { throw .openSSL("minimum TLS version") }
    let context = Array("mockserver".utf8)
    _ = SSL_CTX_set_session_id_context(ctx, context, UInt32(context.count))

    let chain = try PEM.certificates(certificateChainPEM)
    guard let leaf = chain.first else { throw TLSError("load certificate", detail: "no CERTIFICATE block") }
    guard SSL_CTX_use_certificate(ctx, leaf.pointer) == 1 else { throw .openSSL("use certificate") }
    for link in chain.dropFirst() {
      guard cossl_ctx_add1_chain_cert(ctx, link.pointer) == 1 else { throw .openSSL("add chain certificate") }
    }
    let key = try PEM.privateKey(privateKeyPEM)
    guard SSL_CTX_use_PrivateKey(ctx, key.pointer) == 1 else { throw .openSSL("use private key") }
    guard SSL_CTX_check_private_key(ctx) == 1 else {
      throw .openSSL("private key does not match the certificate")
    }

    if let caPEM = clientCertificateAuthorityPEM {
      let authorities = try PEM.certificates(caPEM)
      guard !authorities.isEmpty else {
        throw TLSError("load client CA", detail: "no CERTIFICATE block")
      }
      guard let store = SSL_CTX_get_cert_store(ctx) else { throw .openSSL("certificate store") }
      for authority in authorities {
        guard X509_STORE_add_cert(store, authority.pointer) == 1,
          SSL_CTX_add_client_CA(ctx, authority.pointer) == 1
        else { throw .openSSL("add client CA") }
      }
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
      SSL_CTX_set_verify_depth(ctx, 8)
    }
    OpenSSLErrors.clear()
  }

  /// Configures a context from PEM files.
  /// - Parameters:
  ///   - certificateFile: path of the certificate chain PEM.
  ///   - keyFile: path of the private key PEM.
  ///   - clientCertificateAuthorityFile: path of the client CA PEM (mutual TLS), or nil.
  /// - Throws: ``TLSError`` when a file cannot be read, or as ``init(certificateChainPEM:privateKeyPEM:clientCertificateAuthorityPEM:)``.
  public convenience init(
    certificateFile: String, keyFile: String, clientCertificateAuthorityFile: String? = nil
  ) throws(TLSError) {
    let caPEM: String?
    if let clientCertificateAuthorityFile {
      caPEM = try Self.readFile(clientCertificateAuthorityFile)
    } else {
      caPEM = nil
    }
    try self.init(
      certificateChainPEM: try Self.readFile(certificateFile), privateKeyPEM: try Self.readFile(keyFile),
      clientCertificateAuthorityPEM: caPEM)
  }

  deinit { SSL_CTX_free(ctx) }

  /// The stream for an accepted socket, or nil when OpenSSL cannot make a session.
  func makeStream(fd: Int32) -> ByteStream? {
    TLSByteStream(fd: fd, context: self)
  }

  /// The text of the PEM file at `path` (at most 1 MiB, a regular file: a FIFO or a device is refused
  /// rather than waited on).
  package static func readFile(_ path: String) throws(TLSError) -> String {
    guard let bytes = FileTree.contents(path, maximum: 1 << 20) else {
      throw TLSError("read \(path)", detail: "not a readable regular file of at most 1 MiB")
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
