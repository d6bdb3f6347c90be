import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Reads a pipe to its end on a thread of its own with blocking reads, handing each piece to a closure:
/// how the test harnesses read a child process's output.
///
/// Not `FileHandle.readabilityHandler`: on Linux that installs a libdispatch read source on the
/// descriptor, whose teardown races the descriptor's close and has crashed test processes in the
/// dispatch manager thread (`_dispatch_event_loop_drain`, a dangling epoll muxnote;
/// swift-corelibs-libdispatch issue 949, worked around the same way by swift-tools-protocols' PR 73). A
/// blocking read registers nothing with libdispatch. The reader keeps the handle, so its descriptor stays
/// open (and cannot be reused) until the end of the pipe is read.
package final class PipeReader: Sendable {
  private let ended = DispatchSemaphore(value: 0)

  /// Starts reading `handle` (the read end of a pipe) until its end.
  /// - Parameter receive: called on the reader's thread with each piece read, in order.
  package init(_ handle: FileHandle, receive: @escaping @Sendable ([UInt8]) -> Void) {
    let ended = ended
    nonisolated(unsafe) let handle = handle
    let thread = Thread {
      let fd = handle.fileDescriptor
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 {
          receive(Array(buffer[0..<n]))
        } else if n < 0, errno == EINTR {
          continue
        } else {
          break
        }
      }
      withExtendedLifetime(handle) {}
      ended.signal()
    }
    thread.name = "pipe-reader"
    thread.start()
  }

  /// Waits up to `timeout` seconds for the end of the pipe (every writer closed it); true when it came.
  /// A hang guard, not a bound: the end comes when the child exits, unless something it started still
  /// holds the pipe.
  @discardableResult
  package func waitForEnd(timeout: Double) -> Bool {
    ended.wait(timeout: .now() + timeout) == .success
  }
}
