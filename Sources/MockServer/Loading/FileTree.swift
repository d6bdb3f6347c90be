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
    /// The file itself (device and inode, after following links): two paths to one file have the same,
    /// and a link swapped to another file changes it even when size and time are equal.
    var device: UInt64 = 0
    var inode: UInt64 = 0

    /// The file's identity (what a real path names).
    var identity: FileIdentity { FileIdentity(device: device, inode: inode) }
  }

  /// A file or folder as the kernel knows it (device and inode).
  struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
  }

  /// Names a deployment keeps next to fixtures but never means as fixtures: hidden files and folders
  /// (`.git`, `.DS_Store`, `.#emacs-lock`, `.file.swp`) and editors' backups (`file~`, `#autosave#`,
  /// `*.swp`, `*.swo`, `*.bak`, `*.orig`).
  static func isIgnored(_ name: String) -> Bool {
    if name.hasPrefix(".") || name.hasSuffix("~") { return true }
    if name.hasPrefix("#") && name.hasSuffix("#") { return true }
    for suffix in [".swp", ".swo", ".bak", ".orig"] where name.hasSuffix(suffix) { return true }
    return false
  }

  /// Regular files under `root` (symbolic links to files and folders followed, up to 32 levels deep; a
  /// folder reached twice, through links or a link cycle, is walked once), as paths relative to `root`,
  /// unsorted. Unreadable folders and ignored names (``isIgnored(_:)``) are skipped.
  static func files(under root: String) -> [(path: String, stamp: Stamp)] {
    var out: [(String, Stamp)] = []
    var directories: [String] = []
    var seen = Set<FileIdentity>()
    walk(root, relative: "", depth: 0, wantFiles: true, into: &out, directories: &directories, seen: &seen)
    return out
  }

  /// `root` and every folder below it (paths starting with `root`), for change notifications.
  static func directories(under root: String) -> [String] {
    var out: [(String, Stamp)] = []
    var directories = [root]
    var seen = Set<FileIdentity>()
    walk(root, relative: "", depth: 0, wantFiles: false, into: &out, directories: &directories, seen: &seen)
    return directories
  }

  /// `wantFiles`: false when only folders are collected, so entries the directory lists as regular files
  /// need no `stat` (10,000 mapping files: 10,000 system calls less when the watcher starts).
  private static func walk(
    _ directory: String, relative: String, depth: Int, wantFiles: Bool, into out: inout [(String, Stamp)],
    directories: inout [String], seen: inout Set<FileIdentity>
  ) {
    guard depth < 32 else { return }
    var own = stat()
    if stat(directory, &own) == 0 {
      guard seen.insert(FileIdentity(device: UInt64(own.st_dev), inode: UInt64(own.st_ino))).inserted else {
        return
      }
    }
    guard let dir = opendir(directory) else { return }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
        let bytes = raw.bindMemory(to: UInt8.self)
        let length = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[0..<length], as: UTF8.self)
      }
      if name == "." || name == ".." || isIgnored(name) { continue }
      if !wantFiles, Int(entry.pointee.d_type) == Int(DT_REG) { continue }
      let path = directory + "/" + name
      let rel = relative.isEmpty ? name : relative + "/" + name
      var st = stat()
      guard stat(path, &st) == 0 else { continue }
      switch st.st_mode & S_IFMT {
      case S_IFDIR:
        directories.append(path)
        walk(
          path, relative: rel, depth: depth + 1, wantFiles: wantFiles, into: &out, directories: &directories,
          seen: &seen)
      case S_IFREG where wantFiles:
        out.append(
          (
            rel,
            Stamp(
              seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec), size: Int(st.st_size),
              device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
          ))
      default:
        continue
      }
    }
  }

  /// The bytes of the regular file at `path`, or nil when it cannot be opened or read (one `open`,
  /// `fstat` and `read` per file; fixture loading reads thousands of small files).
  /// - Parameter maximum: larger files are refused (nil) rather than read.
  static func contents(_ path: String, maximum: Int = 1 << 30) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { _ = close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
    let size = Int(st.st_size)
    guard size >= 0, size <= maximum else { return nil }
    // One byte more than the size, so a file that grew since `fstat` is still read whole below.
    var bytes = [UInt8](repeating: 0, count: size + 1)
    var count = 0
    while true {
      if count == bytes.count {
        guard bytes.count < maximum else { return nil }
        bytes += [UInt8](repeating: 0, count: min(bytes.count, maximum - bytes.count))
      }
      let n = bytes.withUnsafeMutableBytes { buffer in
        read(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count)
      }
      if n == 0 { break }
      if n < 0 {
        if errno == EINTR { continue }
        return nil
      }
      count += n
    }
    bytes.removeLast(bytes.count - count)
    return bytes
  }
}
