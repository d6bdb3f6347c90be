import Foundation

/// What a finished child process left: its exit status and what it wrote.
package struct ProcessResult: Sendable {
  package var status: Int32
  /// Standard output, or standard output and standard error together when they were merged.
  package var stdout: String
  /// Standard error ("" when merged into ``stdout``).
  package var stderr: String
}

/// Runs `executable` with `arguments` to its end and returns its status and output. An executable without
/// a slash is looked up in `PATH` (through `/usr/bin/env`). `input` is written to its standard input, which
/// is then closed; `directory` is its working directory; `mergingErrors` sends standard error to the same
/// pipe as standard output (one text, in the order written). Both pipes are drained while the child runs,
/// so a child that writes a lot to either does not block.
package func runProcess(
  _ executable: String, _ arguments: [String], in directory: String? = nil, input: Data? = nil,
  mergingErrors: Bool = false
) throws -> ProcessResult {
  let process = Process()
  if executable.contains("/") {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
  } else {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [executable] + arguments
  }
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let out = Pipe()
  let err = mergingErrors ? out : Pipe()
  process.standardOutput = out
  process.standardError = err
  let stdin = Pipe()
  process.standardInput = input == nil ? FileHandle.nullDevice : stdin
  try process.run()
  if let input {
    stdin.fileHandleForWriting.write(input)
    try? stdin.fileHandleForWriting.close()
  }
  let errors = DrainedPipe(mergingErrors ? nil : err)
  let output = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return ProcessResult(
    status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
    stderr: String(decoding: errors.wait(), as: UTF8.self))
}

/// A pipe read to its end on a thread of its own.
private final class DrainedPipe: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var data = Data()

  init(_ pipe: Pipe?) {
    guard let pipe else {
      done.signal()
      return
    }
    let handle = pipe.fileHandleForReading
    Thread.detachNewThread { [self] in
      data = handle.readDataToEndOfFile()
      done.signal()
    }
  }

  /// Everything read, once the writer closed its end.
  func wait() -> Data {
    done.wait()
    return data
  }
}
