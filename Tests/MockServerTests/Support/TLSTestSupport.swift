import Foundation
import HTTPCore
import TestSupport

@testable import MockServer

/// Answers `tls=BOOL subject=SUBJECT path=PATH` (subject `-` without a client certificate); `/big/N`
/// sends N bytes.
struct TLSInfoResponder: HTTPResponder {
  func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    let path = request.head.rawPath
    let parts = path.split(separator: "/")
    if parts.first == "big", parts.count == 2, let n = Int(parts[1]) {
      return .respond(status: .ok, body: [UInt8](repeating: 97, count: n))
    }
    let text = "tls=\(context.isTLS) subject=\(context.clientCertificateSubject ?? "-") path=\(path)"
    return .respond(status: .ok, body: Array(text.utf8))
  }
}

/// `curl -sS --max-time 10 ARGS URL`.
func curl(_ arguments: [String]) throws -> ProcessResult {
  try runProcess("curl", ["-sS", "--max-time", "10"] + arguments)
}

/// Starts a server with the plain listener and an HTTPS listener using `tls`, for one test.
func withHTTPSServer<T>(
  tls: TLSServerContext, configure: (inout ServerConfiguration) -> Void = { _ in },
  responder: HTTPResponder = TLSInfoResponder(), _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
  try await withServer(configure: configure, responder: responder) { server in
    let port = try server.addHTTPSListener(port: 0, context: tls)
    return try await body(server, port)
  }
}

/// A self-signed localhost certificate, its context, and the certificate written to a file (in a
/// temporary folder removed with it).
final class LocalhostTLS {
  let directory: TemporaryFolder
  let root: CertificateAndKey
  let context: TLSServerContext
  let certificatePath: String

  init() throws {
    directory = try TemporaryFolder()
    root = try CertificateFactory.makeSelfSigned()
    context = try TLSServerContext(
      certificateChainPEM: root.certificatePEM, privateKeyPEM: root.privateKeyPEM)
    certificatePath = try directory.write("localhost.pem", root.certificatePEM)
  }

  deinit { directory.remove() }
}
