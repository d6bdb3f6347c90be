#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Walks a folder with `opendir`/`readdir`/`lstat`: every regular file below it with its size and
/// modification time. Used to load fixtures and, every 250 ms, to detect changes for hot reload, so it
/// avoids Foundation's directory enumerator (measured: 10,000 files took ~0.5 billion instructions there).
enum FileTree {
  /// A file's identity for change detection.
  struct Stamp: Hashable, Sendable {
    var seconds: Int
    var nanoseconds: Int
    var size: Int
  }

  /// Regular files under `root` (symbolic links to files included, directories followed up to 32 levels
  /// deep), as paths relative to `root`, unsorted. Unreadable folders are skipped.
  static func files(under root: String) -> [(path: String, stamp: Stamp)] {
    var out: [(String, Stamp)] = []
    var directories: [String] = []
    walk(root, relative: "", depth: 0, into: &out, directories: &directories)
    return out
  }

  /// `root` and every folder below it (paths starting with `root`), for change notifications.
  static func directories(under root: String) -> [String] {
    var out: [(String, Stamp)] = []
    var directories = [root]
    walk(root, relative: "", depth: 0, into: &out, directories: &directories)
    return directories
  }

  private static func walk(
    _ directory: String, relative: String, depth: Int, into out: inout [(String, Stamp)],
    directories: inout [String]
  ) {
    guard depth < 32, let dir = opendir(directory) else { return }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
        let bytes = raw.bindMemory(to: UInt8.self)
        let length = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[0..<length], as: UTF8.self)
      }
      if name == "." || name == ".." { continue }
      let path = directory + "/" + name
      let rel = relative.isEmpty ? name : relative + "/" + name
      var st = stat()
      guard stat(path, &st) == 0 else { continue }
      switch st.st_mode & S_IFMT {
      case S_IFDIR:
        directories.append(path)
        walk(path, relative: rel, depth: depth + 1, into: &out, directories: &directories)
      case S_IFREG:
        out.append(
          (
            rel,
            Stamp(
              seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec), size: Int(st.st_size))
          ))
      default:
        continue
      }
    }
  }
}
