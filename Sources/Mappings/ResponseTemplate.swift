import HTTPCore
import MockJSON
import Templating

/// The templated parts of a stub's response, compiled at load time (WireMock's `response-template`
/// transformer). Fields without `{{` are not templates and stay in the ``ResponseDefinition`` as they are.
public struct ResponseTemplate: Sendable, Hashable {
  /// The stub names `response-template` in `transformers` (local mode); otherwise only global templating
  /// applies the template.
  public var local: Bool
  /// The body (`body`, the serialized `jsonBody`, or the content of a fixed `bodyFileName`), when templated.
  public var body: Template?
  /// Header values that are templates: the index of the field in ``ResponseDefinition/headers`` and its
  /// template.
  public var headers: [HeaderTemplate]
  /// `statusMessage`, when templated.
  public var statusMessage: Template?
  /// `bodyFileName` when the path itself is a template: the file is read for each request.
  public var bodyFileName: Template?
  /// `proxyBaseUrl`, when templated: the upstream is chosen per request.
  public var proxyBaseUrl: Template?
  /// The content of a templated `bodyFileName` is not a template (`disableBodyFileTemplating`).
  public var disableBodyFileTemplating: Bool
  /// `transformerParameters`, visible to templates as `parameters`.
  public var parameters: JSONValue?
  /// Reads `__files/` for a templated `bodyFileName`.
  public var files: BodyFileReader?
  /// Under global templating only: the fields served as written because they call an unknown helper
  /// (`$.response.body: 1:1: unknown helper 'random'`), logged once per stub while serving.
  package var unknownHelpers: [String] = []

  /// A templated header value.
  public struct HeaderTemplate: Sendable, Hashable {
    /// Index of the header field in the definition's headers.
    public var index: Int
    /// Its template.
    public var template: Template
  }

  /// Creates an empty (no field templated) description.
  public init(local: Bool) {
    self.local = local
    body = nil
    headers = []
    statusMessage = nil
    bodyFileName = nil
    proxyBaseUrl = nil
    disableBodyFileTemplating = false
    parameters = nil
    files = nil
  }

  /// True when the body is the only templated field of the response (`proxyBaseUrl` aside): the head
  /// then does not depend on the request.
  public var templatesBodyOnly: Bool {
    body != nil && headers.isEmpty && statusMessage == nil && bodyFileName == nil
  }

  /// True when a templated field may call the `state` helper (its text names `state`): serving it may
  /// read the state extension's contexts.
  public var mayReadState: Bool {
    let templates =
      [body, statusMessage, bodyFileName, proxyBaseUrl].compactMap { $0 } + headers.map(\.template)
    return templates.contains { $0.source.contains("state") }
  }

  /// True when no field is templated.
  public var isEmpty: Bool {
    body == nil && headers.isEmpty && statusMessage == nil && bodyFileName == nil && proxyBaseUrl == nil
  }
}

/// Reads files under `__files/` at request time (for templated `bodyFileName` paths).
public struct BodyFileReader: Sendable, Hashable {
  /// Reads a path relative to `__files/`.
  public let read: @Sendable (String) -> Result<[UInt8], StubParsingContext.BodyFileError>
  /// Wraps a reader.
  public init(_ read: @escaping @Sendable (String) -> Result<[UInt8], StubParsingContext.BodyFileError>) {
    self.read = read
  }
  /// Readers are interchangeable for equality.
  public static func == (a: BodyFileReader, b: BodyFileReader) -> Bool { true }
  /// Constant hash.
  public func hash(into hasher: inout Hasher) {}
}
