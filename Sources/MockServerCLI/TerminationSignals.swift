import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The write end of the pipe SIGINT and SIGTERM are reported on, or -1. The signal handler reads it, so
/// it is an atomic (lock-free, safe in a handler) rather than state behind a lock.
private let terminationPipe = Atomic<Int32>(-1)

/// SIGINT, SIGTERM and SIGHUP turned into a call, with no window in which a signal is lost.
///
/// `sigaction` puts the handler in place before ``install(_:)`` returns, for every thread of the
/// process (the binary and a program that runs ``MockServerMain/run(arguments:)`` in-process alike).
/// The handler only writes a byte to a pipe (async-signal-safe); a thread reads the pipe and calls
/// `onSignal`. Dispatch signal sources, used before, register asynchronously: a signal sent right after
/// `listening on` was ignored in 1–2 of 300 starts (issue 42), also after a first request. The calling
/// thread unblocks both signals (see ``install(_:)``), so call it before starting other threads.
package final class TerminationSignals: Sendable {
  private let writeEnd: Int32
  /// The dispositions found at install, put back by ``cancel()``; nil once cancelled.
  private let previous: Mutex<[Int32: sigaction]?>

  private init(writeEnd: Int32) {
    self.writeEnd = writeEnd
    previous = Mutex([:])
  }

  /// Handles SIGINT and SIGTERM from now on by calling `onSignal` (on a thread of its own, once per
  /// signal). Returns nil when no pipe can be made (descriptors exhausted); the caller says so.
  package static func install(_ onSignal: @escaping @Sendable () -> Void) -> TerminationSignals? {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    // The handler must never block: a full pipe already holds a pending report.
    _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
    let (readEnd, writeEnd) = (fds[0], fds[1])
    let signals = TerminationSignals(writeEnd: writeEnd)
    terminationPipe.store(writeEnd, ordering: .sequentiallyConsistent)
    let reader = Thread {
      var byte: UInt8 = 0
      while true {
        let n = read(readEnd, &byte, 1)
        if n == 1 {
          onSignal()
        } else if n == 0 || errno != EINTR {
          break
        }
      }
      close(readEnd)
    }
    reader.name = "mockserver.signals"
    reader.start()
    // SIGHUP too: a closed terminal ends the server (and a recording) as Ctrl-C does, cleanly.
    for sig in [SIGINT, SIGTERM, SIGHUP] {
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { _ in
        let saved = errno
        var byte: UInt8 = 1
        let fd = terminationPipe.load(ordering: .sequentiallyConsistent)
        if fd >= 0 { _ = write(fd, &byte, 1) }
        errno = saved
      }
      sigemptyset(&action.sa_mask)
      action.sa_flags = SA_RESTART
      var old = sigaction()
      sigaction(sig, &action, &old)
      signals.previous.withLock { $0?[sig] = old }
    }
    // A process inherits the signal mask of the thread that started it: started from a Dispatch or Swift
    // concurrency thread (test harnesses), SIGINT and SIGTERM arrive blocked in every thread and stay
    // pending forever (the handler never runs). Unblocked here, with the handler in place, one pending
    // already is delivered now; threads started later (the event loops) inherit the unblocked mask.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    sigaddset(&set, SIGHUP)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
    return signals
  }

  /// Puts back the dispositions found by ``install(_:)`` and stops the reading thread. A second call
  /// does nothing.
  package func cancel() {
    guard
      let found = previous.withLock({ p -> [Int32: sigaction]? in
        defer { p = nil }
        return p
      })
    else { return }
    for (sig, action) in found {
      var old = action
      sigaction(sig, &old, nil)
    }
    _ = terminationPipe.compareExchange(
      expected: writeEnd, desired: -1, ordering: .sequentiallyConsistent)
    // The reader sees the end of the pipe and closes its end.
    close(writeEnd)
  }
}
