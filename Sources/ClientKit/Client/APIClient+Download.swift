import Foundation
import HTTPCore
import Synchronization

/// A response whose body was written to a file by ``APIClient/download(_:to:resumingFrom:progress:)``.
public struct DownloadResponse: Sendable, Hashable {
  /// The file holding the body.
  public var fileURL: URL
  /// Number of body bytes in the file (for a resumed download: the bytes kept plus the bytes received).
  public var byteCount: Int
  /// Status code: `206` when a resumed download continued the file, `200` when it was sent again whole.
  public var statusCode: Int
  /// Header fields in order.
  public var headers: HTTPHeaders
  /// The request that was answered.
  public var request: RequestInfo
  /// Timings, sizes and attempts.
  public var metrics: RequestMetrics

  /// Every value of header `name` (any spelling) combined with ", ", or nil.
  public func header(_ name: String) -> String? { headers[name] }
}

/// What a download that stopped part-way needs to continue from where it stopped (RFC 9110 §14): the
/// partial file and the validator of the representation its bytes belong to.
///
/// Resuming sends `Range: bytes=<byteCount>-` with `If-Range: <validator>`: a server that still has the same
/// representation answers `206 Partial Content` and the body is appended to the file; one whose
/// representation changed (or that ignores ranges) answers `200` and the file is written again from the
/// start. Both transports do this (the same mechanism everywhere; see docs/clientkit.md §12).
public struct DownloadResumeData: Sendable, Hashable, Codable {
  /// The URL that was being downloaded.
  public var url: URL
  /// The partial file.
  public var fileURL: URL
  /// Bytes of the body in ``fileURL`` (the next request asks for the rest).
  public var byteCount: Int64
  /// The strong `ETag`, or else the `Last-Modified` date, of the response the bytes came from; sent as
  /// `If-Range`.
  public var validator: String
  /// The whole body's size when the server said it, or nil.
  public var totalByteCount: Int64?

  /// Creates resume data (normally you get it from ``DownloadTask/resumeData``).
  public init(url: URL, fileURL: URL, byteCount: Int64, validator: String, totalByteCount: Int64? = nil) {
    self.url = url
    self.fileURL = fileURL
    self.byteCount = byteCount
    self.validator = validator
    self.totalByteCount = totalByteCount
  }

  /// Resume data for a body cut short after the response head `headers` (status `statusCode`), with
  /// `fileURL` holding the bytes received so far; nil when it cannot be resumed: not a `200`/`206`, no
  /// strong `ETag` and no `Last-Modified` (RFC 9110 §13.1.5 needs a validator), `Accept-Ranges: none`, no
  /// byte in the file, or the whole body already there.
  static func after(
    statusCode: Int, headers: HTTPHeaders, url: URL, fileURL: URL
  ) -> DownloadResumeData? {
    guard statusCode == 200 || statusCode == 206,
      headers.first("Accept-Ranges")?.lowercased() != "none"
    else { return nil }
    let etag = headers.first("ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
    guard let validator = etag ?? headers.first("Last-Modified"),
      let size = (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)??
        .int64Value,
      size > 0
    else { return nil }
    var total: Int64?
    if statusCode == 206 {
      total = headers.first("Content-Range").flatMap { ContentRange($0)?.completeLength }
    } else {
      total = headers.first("Content-Length").flatMap { Int64($0) }
    }
    if let total, size >= total { return nil }
    return DownloadResumeData(
      url: url, fileURL: fileURL, byteCount: size, validator: validator, totalByteCount: total)
  }
}

/// A `Content-Range: bytes first-last/complete` value (RFC 9110 §14.4).
struct ContentRange: Hashable {
  var first: Int64
  var last: Int64
  var completeLength: Int64?

  /// Parses `bytes 0-499/1234` or `bytes 0-499/*`; nil for anything else (units other than bytes,
  /// unsatisfied ranges, numbers out of range, last before first).
  init?(_ value: String) {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = trimmed.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard spec.count == 2 else { return nil }
    let bounds = spec[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0,
      last >= first
    else { return nil }
    self.first = first
    self.last = last
    if spec[1] == "*" {
      completeLength = nil
    } else {
      guard let complete = Int64(spec[1]), complete > last else { return nil }
      completeLength = complete
    }
  }
}

/// A download in progress, as a handle (Alamofire's `DownloadRequest`): await its ``response``, cancel it,
/// and after a failure or cancellation take its ``resumeData`` to continue later with
/// ``APIClient/downloadTask(_:to:resumingFrom:progress:)``.
///
/// ```swift
/// let download = client.downloadTask(Endpoint<Data>(.get, "/videos/1"), to: file) { p in show(p.fraction) }
/// // … the user taps pause:
/// download.cancel()
/// let resume = await download.resumeData               // nil when it cannot be resumed
/// // … later:
/// let done = try await client.downloadTask(Endpoint<Data>(.get, "/videos/1"), to: file,
///                                          resumingFrom: resume).response
/// ```
public final class DownloadTask: Sendable {
  private let task: Task<Result<DownloadResponse, APIError>, Never>
  private let head: HeadRecorder

  init(task: Task<Result<DownloadResponse, APIError>, Never>, head: HeadRecorder) {
    self.task = task
    self.head = head
  }

  /// Waits for the download to end.
  /// - Returns: the file and the response head.
  /// - Throws: as ``APIClient/download(_:to:resumingFrom:progress:)``; ``APIError/cancelled`` after
  ///   ``cancel()``.
  public var response: DownloadResponse {
    get async throws(APIError) { try await task.value.get() }
  }

  /// Cancels the download: the connection is closed and the partial file is kept for ``resumeData``.
  public func cancel() {
    task.cancel()
  }

  /// Waits for the download to end; then, if it failed or was cancelled after part of the body arrived
  /// from a server that gave a validator, what is needed to resume it; nil otherwise (also after success).
  public var resumeData: DownloadResumeData? {
    get async {
      if case .success = await task.value { return nil }
      return head.resumeData()
    }
  }
}

/// The last final response head a download saw, for its resume data.
final class HeadRecorder: Sendable {
  private struct Head {
    var statusCode: Int
    var headers: HTTPHeaders
  }
  private let last = Mutex<Head?>(nil)
  let url: URL
  let fileURL: URL

  init(url: URL, fileURL: URL) {
    self.url = url
    self.fileURL = fileURL
  }

  func record(statusCode: Int, headers: HTTPHeaders) {
    last.withLock { $0 = Head(statusCode: statusCode, headers: headers) }
  }

  func resumeData() -> DownloadResumeData? {
    guard let head = last.withLock({ $0 }) else { return nil }
    return DownloadResumeData.after(
      statusCode: head.statusCode, headers: head.headers, url: url, fileURL: fileURL)
  }
}

extension APIClient {
  /// Downloads the body of `request` to `destination` (created or replaced), streaming it to disk with no
  /// size limit, with the same defaults, authentication, adapters, retries and deadline as every call.
  ///
  /// ```swift
  /// let file = FileManager.default.temporaryDirectory.appendingPathComponent("video.mp4")
  /// let done = try await client.download(Endpoint<Data>(.get, "/videos/1"), to: file) { p in
  ///   print(p.fraction ?? 0)            // from 0 to 1, never decreasing within an attempt
  /// }
  /// ```
  /// ``SocketTransport`` and ``URLSessionTransport`` write the bytes as they arrive and ask for them
  /// without content coding; other transports return the body in memory and the client writes it. A
  /// retried attempt starts again from the first byte (or from `resumingFrom`); to continue a download
  /// that failed or was cancelled, use ``downloadTask(_:to:resumingFrom:progress:)`` and its
  /// ``DownloadTask/resumeData``.
  /// - Parameters:
  ///   - request: the request; its `Response` type is not used (no decoding, no envelope).
  ///   - destination: a file URL.
  ///   - resumingFrom: resume data of an earlier attempt at the same download into `destination`, or nil
  ///     to start from the first byte. Sends `Range` and `If-Range`; a `206` continues the file, a `200`
  ///     rewrites it.
  ///   - progress: download progress of each attempt, or nil; when resuming it counts the bytes in the
  ///     file (starting from those kept).
  /// - Returns: the file and the response head.
  /// - Throws: any ``APIError`` case; a status outside ``Request/acceptableStatusCodes`` is
  ///   ``APIError/unacceptableStatus(_:application:)`` with the body read back (and the file removed);
  ///   a `206` whose `Content-Range` does not start where the file ends is
  ///   ``APIError/malformedResponse(_:detail:)``; ``APIError/invalidRequest(_:)`` when `destination` does
  ///   not hold the bytes `resumingFrom` says.
  public func download<R: Request>(
    _ request: R, to destination: URL, resumingFrom: DownloadResumeData? = nil,
    progress: ProgressHandler? = nil
  ) async throws(APIError) -> DownloadResponse {
    try await download(
      request, to: destination, resumingFrom: resumingFrom, progress: progress, head: nil)
  }

  /// Starts downloading the body of `request` to `destination` and returns its handle at once; see
  /// ``download(_:to:resumingFrom:progress:)`` for the parameters and ``DownloadTask`` for pausing and
  /// resuming.
  /// - Returns: the handle; the download runs in its own task.
  public func downloadTask<R: Request>(
    _ request: R, to destination: URL, resumingFrom: DownloadResumeData? = nil,
    progress: ProgressHandler? = nil
  ) -> DownloadTask {
    let url = (try? makeURL(path: request.path, query: request.queryItems)) ?? baseURL
    let head = HeadRecorder(url: url, fileURL: destination)
    let task = Task { () -> Result<DownloadResponse, APIError> in
      do throws(APIError) {
        return .success(
          try await download(
            request, to: destination, resumingFrom: resumingFrom, progress: progress, head: head))
      } catch {
        return .failure(error)
      }
    }
    return DownloadTask(task: task, head: head)
  }

  private func download<R: Request>(
    _ request: R, to destination: URL, resumingFrom resume: DownloadResumeData?,
    progress: ProgressHandler?, head: HeadRecorder?
  ) async throws(APIError) -> DownloadResponse {
    let call = CallID.next()
    let offset = resume?.byteCount ?? 0
    var recordHead: (@Sendable (Int, HTTPHeaders) -> Void)?
    if let head {
      recordHead = { status, headers in head.record(statusCode: status, headers: headers) }
    }
    var options = TransferOptions(
      downloadProgress: progress, bodyFile: destination, bodyFileOffset: offset, responseHead: recordHead)
    if let resume, offset > 0 {
      options.extraHeaders.add(name: "Range", value: "bytes=\(offset)-")
      options.extraHeaders.add(name: "If-Range", value: resume.validator)
    }
    let outcome = try await perform(request, call: call, options: options, forceNetwork: true)
    let metrics = outcome.metrics(clock: outcome.clock)
    var byteCount = outcome.bodyByteCount
    if offset > 0, outcome.info.statusCode == 206 {
      let range = outcome.info.headers.first("Content-Range").flatMap(ContentRange.init)
      guard let range, range.first == offset else {
        let error = APIError.malformedResponse(
          outcome.info.request,
          detail: "a 206 answer to Range: bytes=\(offset)- has Content-Range "
            + "\(outcome.info.headers.first("Content-Range") ?? "(none)")")
        for monitor in monitors { monitor.requestFailed(call, error: error, metrics: metrics) }
        throw error
      }
      byteCount += Int(offset)
    }
    for monitor in monitors { monitor.requestDecoded(call, response: outcome.info, metrics: metrics) }
    return DownloadResponse(
      fileURL: outcome.bodyFile ?? destination, byteCount: byteCount,
      statusCode: outcome.info.statusCode, headers: outcome.info.headers, request: outcome.info.request,
      metrics: metrics)
  }
}
