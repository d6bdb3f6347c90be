/// A call started with a completion handler; cancel it to stop the request.
public final class CancellableRequest: Sendable {
  private let task: Task<Void, Never>

  init(_ task: Task<Void, Never>) {
    self.task = task
  }

  /// Cancels the request; the completion receives ``APIError/cancelled`` unless it already ran.
  public func cancel() { task.cancel() }

  /// True after ``cancel()``.
  public var isCancelled: Bool { task.isCancelled }

  /// Waits until the call has finished and the completion has been scheduled on its queue.
  public func wait() async { await task.value }
}
