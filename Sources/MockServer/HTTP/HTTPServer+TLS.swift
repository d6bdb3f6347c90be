extension HTTPServer {
  /// Adds an HTTPS listener on the server's first event loop, next to the plain HTTP one. Call after
  /// ``start()``; it stops with the server.
  /// - Parameters:
  ///   - host: address to bind (default: the configuration's host).
  ///   - port: TCP port, 0 for a free one.
  ///   - context: the TLS configuration, shared by every connection on this listener.
  /// - Returns: the bound port.
  /// - Throws: ``IOError`` when the address cannot be bound.
  @discardableResult
  public func addHTTPSListener(host: String? = nil, port: Int, context: TLSServerContext) throws(IOError)
    -> Int
  {
    try addListener(host: host ?? configuration.host, port: port, isTLS: true) { fd in
      context.makeStream(fd: fd)
    }
  }
}
