import Foundation

/// The file a download's body is written to (``TransferOptions/bodyFile``), shared by the transports so
/// that resuming works the same over each: with ``TransferOptions/bodyFileOffset`` N > 0 the file's first
/// N bytes are kept when the response is `206 Partial Content` (the body continues them), and the file is
/// rewritten from the start for any other status.
///
/// A value owned by one exchange (the socket transport's thread, or the URLSession exchange's lock).
struct DownloadFile: Sendable {
  let url: URL
  private let handle: FileHandle
  private let resumeOffset: Int64
  /// Where this response's body starts in the file: the resume offset for a 206, else 0.
  private(set) var startOffset: Int64 = 0
  /// Body bytes written by this response.
  private(set) var written = 0
  /// True for a `3xx` head: its body is not written (a followed redirect's next response is the one the
  /// file is for; the file is left as it was).
  private var discarding = false

  /// Opens `url` for writing: creates it (replacing a file there) when `resumeOffset` is 0, opens the
  /// existing file otherwise.
  /// - Throws: ``APIError/invalidRequest(_:)`` when the file cannot be created or opened, or holds fewer
  ///   than `resumeOffset` bytes.
  init(url: URL, resumeOffset: Int64) throws(APIError) {
    self.url = url
    self.resumeOffset = max(0, resumeOffset)
    if self.resumeOffset > 0 {
      let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)??
        .int64Value
      guard let size, size >= self.resumeOffset, let handle = try? FileHandle(forWritingTo: url) else {
        throw .invalidRequest(
          "cannot resume the download in \(url.path): it does not hold the \(self.resumeOffset) bytes to resume after"
        )
      }
      self.handle = handle
    } else {
      guard FileManager.default.createFile(atPath: url.path, contents: nil),
        let handle = try? FileHandle(forWritingTo: url)
      else { throw .invalidRequest("cannot write the download to \(url.path)") }
      self.handle = handle
    }
  }

  /// Called with the final response's status: keeps the first `resumeOffset` bytes for a 206 and drops
  /// everything after them; empties the file for any other status but a `3xx`, which leaves it as it is.
  mutating func begin(statusCode: Int) {
    discarding = (300..<400).contains(statusCode)
    if discarding { return }
    startOffset = statusCode == 206 ? resumeOffset : 0
    written = 0
    try? handle.truncate(atOffset: UInt64(startOffset))
    try? handle.seek(toOffset: UInt64(startOffset))
  }

  /// Why writing failed (disk full, file removed…), or nil; later writes are skipped and the transport
  /// reports the download as failed.
  private(set) var writeFailure: String?

  /// Appends body bytes (`write(contentsOf:)`, which throws on failure where `write(_:)` raises an
  /// Objective-C exception on Apple platforms).
  mutating func write(_ data: Data) {
    if discarding || writeFailure != nil { return }
    do {
      try handle.write(contentsOf: data)
      written += data.count
    } catch {
      writeFailure = "cannot write the download to \(url.path): \(error.localizedDescription)"
    }
  }

  /// The progress to report: bytes in the file, of the file's expected size (`startOffset` plus the
  /// response's `Content-Length` when known).
  func progress(contentLength: Int64?) -> DownloadProgress {
    DownloadProgress(
      receivedBytes: startOffset + Int64(written), expectedBytes: contentLength.map { startOffset + $0 })
  }

  /// Closes the file.
  func close() {
    try? handle.close()
  }
}
