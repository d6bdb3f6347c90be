import Foundation

/// Polls `condition` every 50 ms until it holds or `timeout` seconds pass; returns whether it held.
///
/// The timeout only bounds how long a failing test waits: a passing test returns as soon as the event it
/// waits for has happened, so a generous timeout costs nothing and a loaded machine does not fail it.
package func eventually(timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if try condition() { return true }
    usleep(50_000)
  }
  return try condition()
}

/// ``eventually(timeout:_:)`` for asynchronous tests: polls every 10 ms without blocking a thread of the
/// cooperative pool. The label is required: without it, an asynchronous test's `eventually { … }` means
/// the blocking one above.
package func eventually(within timeout: Duration, _ condition: () -> Bool) async -> Bool {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(10))
  }
  return condition()
}
