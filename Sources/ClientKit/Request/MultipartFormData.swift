import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, in order.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("Aiko", name: "name")
/// form.append(jpegData, name: "avatar", filename: "me.jpg", contentType: "image/jpeg")
/// try form.append(fileAt: URL(fileURLWithPath: "/tmp/log.txt"), name: "log")   // type from the extension
/// let upload = Endpoint<EmptyResponse>(.post, "/avatar", body: .multipart(form))
/// ```
///
/// Each part has `Content-Disposition: form-data; name="…"` (and `filename="…"` for files) and, for files,
/// a `Content-Type` (default `application/octet-stream`). Quotes, CR and LF in names and file names are
/// percent-encoded (`%22`, `%0D`, `%0A`) as HTML forms do (RFC 7578 §2, WHATWG). The boundary is random
/// and checked not to occur in the content.
public struct MultipartFormData: Sendable, Hashable {
  /// One part.
  public struct Part: Sendable, Hashable {
    /// The field name.
    public var name: String
    /// The file name, for file parts.
    public var filename: String?
    /// The part's `Content-Type`, or nil for none (text fields).
    public var contentType: String?
    /// The content.
    public var data: Data
  }

  /// The parts, in order.
  public private(set) var parts: [Part] = []
  /// The boundary between parts (1–70 characters, RFC 2046 §5.1.1).
  public let boundary: String

  /// Creates an empty form.
  /// - Parameter boundary: a fixed boundary (for tests), or nil for a random one.
  public init(boundary: String? = nil) {
    self.boundary =
      boundary ?? "ClientKit-" + (0..<24).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
  }

  /// Appends a text field, sent as UTF-8 without a `Content-Type`.
  public mutating func append(_ value: String, name: String) {
    parts.append(Part(name: name, filename: nil, contentType: nil, data: Data(value.utf8)))
  }

  /// Appends a file from memory.
  /// - Parameters:
  ///   - data: the content.
  ///   - name: the field name.
  ///   - filename: the file name sent.
  ///   - contentType: default `application/octet-stream`.
  public mutating func append(
    _ data: Data, name: String, filename: String, contentType: String = "application/octet-stream"
  ) {
    parts.append(Part(name: name, filename: filename, contentType: contentType, data: data))
  }

  /// Appends a file read from disk now.
  /// - Parameters:
  ///   - url: a file URL.
  ///   - name: the field name.
  ///   - filename: the file name sent (default the URL's last component).
  ///   - contentType: the type, or nil to guess from the extension (`application/octet-stream` otherwise).
  /// - Throws: ``APIError/invalidRequest(_:)`` when the file cannot be read.
  public mutating func append(
    fileAt url: URL, name: String, filename: String? = nil, contentType: String? = nil
  )
    throws(APIError)
  {
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw .invalidRequest("cannot read \(url.path) for the multipart body: \(error.localizedDescription)")
    }
    append(
      data, name: name, filename: filename ?? url.lastPathComponent,
      contentType: contentType ?? Self.contentType(forExtension: url.pathExtension))
  }

  /// The `Content-Type` of the whole body: `multipart/form-data; boundary=…`.
  public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

  /// The encoded body.
  public func encoded() -> Data {
    var out = Data()
    for part in parts {
      out.append(Data("--\(boundary)\r\n".utf8))
      var disposition = "Content-Disposition: form-data; name=\"\(Self.escape(part.name))\""
      if let filename = part.filename { disposition += "; filename=\"\(Self.escape(filename))\"" }
      out.append(Data((disposition + "\r\n").utf8))
      if let type = part.contentType { out.append(Data("Content-Type: \(type)\r\n".utf8)) }
      out.append(Data("\r\n".utf8))
      out.append(part.data)
      out.append(Data("\r\n".utf8))
    }
    out.append(Data("--\(boundary)--\r\n".utf8))
    return out
  }

  /// True when no part's content contains the boundary delimiter.
  var boundaryIsUnique: Bool {
    let delimiter = Data("--\(boundary)".utf8)
    return !parts.contains { $0.data.range(of: delimiter) != nil }
  }

  static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
      .replacingOccurrences(of: "\n", with: "%0A")
  }

  static func contentType(forExtension ext: String) -> String {
    switch ext.lowercased() {
    case "jpg", "jpeg": return "image/jpeg"
    case "png": return "image/png"
    case "gif": return "image/gif"
    case "heic": return "image/heic"
    case "pdf": return "application/pdf"
    case "json": return "application/json"
    case "txt", "log": return "text/plain"
    case "csv": return "text/csv"
    case "zip": return "application/zip"
    case "mp4": return "video/mp4"
    default: return "application/octet-stream"
    }
  }
}
