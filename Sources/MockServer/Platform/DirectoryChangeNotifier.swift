import Dispatch
import Synchronization

#if canImport(Glibc)
  import CLinuxShims
  import Glibc
#endif

/// Change notifications for a folder tree, so that a watcher does no work while nothing changes:
/// `inotify(7)` on Linux. Where the system has none that this type uses, ``init(folder:queue:onChange:)``
/// returns nil and the caller compares the folder's files every interval instead (``FixtureWatcher``).
///
/// The folder, the folders below it (added by ``watch(_:)`` as they appear) and the folder's parent are
/// watched: a removed and recreated folder is a new one, which the watches on the old one never see, so
/// events in the parent about the folder's own name count too.
final class DirectoryChangeNotifier: Sendable {
  /// The descriptor, the read source on it, and the parent folder's watch.
  private let state: Mutex<(fd: Int32, source: DispatchSourceRead?, parentWatch: Int32)>
  private let parentPath: String
  private let folderName: String

  /// Starts notifications for the folder at the standardized path `folder`: `onChange` runs on `queue`
  /// after events about it. Nil where notifications are not available (or the system refused them).
  init?(folder: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
    let slash = folder.utf8.lastIndex(of: UInt8(ascii: "/")) ?? folder.utf8.startIndex
    folderName = folder == "/" ? "/" : String(folder[folder.index(after: slash)...])
    parentPath = slash == folder.utf8.startIndex ? "/" : String(folder[..<slash])
    #if os(Linux)
      let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
      guard fd >= 0 else { return nil }
      state = Mutex((fd: fd, source: nil, parentWatch: -1))
      let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
      source.setEventHandler { [self] in
        if drainEvents() { onChange() }
      }
      source.setCancelHandler { _ = Glibc.close(fd) }
      state.withLock { $0.source = source }
      source.resume()
    #else
      return nil
    #endif
  }

  /// Watches the parent and each of `folders` (watching one already watched is harmless). Call again
  /// with the folders created since.
  func watch(_ folders: [String]) {
    #if os(Linux)
      let fd = state.withLock { $0.fd }
      guard fd >= 0 else { return }
      let mask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB
          | IN_DELETE_SELF | IN_MOVE_SELF)
      let parentMask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR)
      let parent = inotify_add_watch(fd, parentPath, parentMask)
      state.withLock { $0.parentWatch = parent }
      for folder in folders {
        _ = inotify_add_watch(fd, folder, mask)
      }
    #endif
  }

  /// Stops the notifications (the descriptor is closed once its source is cancelled).
  func cancel() {
    state.withLock { s in
      s.source?.cancel()
      s.source = nil
    }
  }

  /// Queue thread: reads every pending event; true when one is about the folder or what is in it.
  private func drainEvents() -> Bool {
    let (fd, parent) = state.withLock { ($0.fd, $0.parentWatch) }
    var buffer = [UInt8](repeating: 0, count: 16384)
    var relevant = false
    while case let n = buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }), n > 0 {
      if !relevant { relevant = containsRelevantEvent(buffer[0..<n], parentWatch: parent) }
    }
    return relevant
  }

  /// True when some `inotify_event` in `bytes` is about the folder or what is in it (events on the
  /// parent count only for the folder's own name).
  private func containsRelevantEvent(_ bytes: ArraySlice<UInt8>, parentWatch: Int32) -> Bool {
    var offset = bytes.startIndex
    let headerSize = 16
    while offset + headerSize <= bytes.endIndex {
      func word(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3])
          << 24
      }
      let wd = Int32(bitPattern: word(offset))
      let length = Int(word(offset + 12))
      let nameStart = offset + headerSize
      let nameEnd = min(bytes.endIndex, nameStart + length)
      if wd != parentWatch { return true }
      let name = bytes[nameStart..<nameEnd].prefix { $0 != 0 }
      if name.elementsEqual(folderName.utf8) { return true }
      offset = nameEnd
    }
    return false
  }
}
