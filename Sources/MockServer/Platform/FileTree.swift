import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Walks a folder with `opendir`/`readdir`/`lstat`: every regular file below it with its size and
/// modification time. Used to load fixtures and, every 250 ms, to detect changes for hot reload, so it
/// avoids Foundation's directory enumerator (measured: 10,000 files took ~0.5 billion instructions there).
enum FileTree {
  /// How many times a folder or file could not be opened because the process (`EMFILE`) or the system
  /// (`ENFILE`) had no descriptor left, since start. A walk or load that saw it grow is not an answer about
  /// the folder (it looked empty or unreadable): the watcher tries again later (``FixtureWatcher``).
  static let descriptorShortages = Atomic<Int>(0)

  /// Counts a failed `open`/`opendir` whose `errno` says descriptors ran out.
  static func noteOpenFailure(_ error: Int32 = errno) {
    if error == EMFILE || error == ENFILE { descriptorShortages.add(1, ordering: .relaxed) }
  }

  /// True when a descriptor can be opened now (one is opened and closed).
  static func descriptorsAvailable() -> Bool {
    let fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else {
      noteOpenFailure()
      return false
    }
    _ = close(fd)
    return true
  }

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
    // ASCII names (nearly all) by their bytes: the same answers as the `Character` comparisons below, for
    // a tenth of the cost (a walk of 10,000 mapping files asks 10,000 times).
    var name = name
    if let ascii = name.withUTF8({ isIgnoredASCII($0) }) { return ascii }
    if name.hasPrefix(".") || name.hasSuffix("~") { return true }
    if name.hasPrefix("#") && name.hasSuffix("#") { return true }
    for suffix in [".swp", ".swo", ".bak", ".orig"] where name.hasSuffix(suffix) { return true }
    return false
  }

  /// ``isIgnored(_:)`` for a name of ASCII bytes, or nil when it has other bytes.
  private static func isIgnoredASCII(_ name: UnsafeBufferPointer<UInt8>) -> Bool? {
    guard let first = name.first, let last = name.last else { return false }
    for c in name where c >= 0x80 { return nil }
    if first == UInt8(ascii: ".") || last == UInt8(ascii: "~") { return true }
    if first == UInt8(ascii: "#") && last == UInt8(ascii: "#") { return true }
    func hasSuffix(_ suffix: StaticString) -> Bool {
      let n = suffix.utf8CodeUnitCount
      guard name.count >= n else { return false }
      return memcmp(name.baseAddress! + (name.count - n), suffix.utf8Start, n) == 0
    }
    return hasSuffix(".swp") || hasSuffix(".swo") || hasSuffix(".bak") || hasSuffix(".orig")
  }

  /// Regular files under `root` (symbolic links to files and folders followed, up to 32 levels deep; a
  /// folder reached twice, through links or a link cycle, is walked once), as paths relative to `root`,
  /// unsorted. Unreadable folders and ignored names (``isIgnored(_:)``) are skipped.
  /// - Parameter known: stamps already read for some of these paths (from the `fstat` of a load that read
  ///   the files): an entry the folder lists as a regular file takes its stamp from here, without a `stat`.
  static func files(under root: String, known: [String: Stamp] = [:]) -> [(path: String, stamp: Stamp)] {
    var out: [(String, Stamp?)] = []
    var directories: [String] = []
    var seen = Set<FileIdentity>()
    walk(
      root, relative: "", depth: 0, mode: .stamped(known), into: &out, directories: &directories, seen: &seen)
    return out.compactMap { entry in entry.1.map { (entry.0, $0) } }
  }

  /// Like ``files(under:known:)``, but an entry the folder lists as a regular file comes without a stamp
  /// (no `stat`): for a loader that opens each file anyway and takes its stamp from `fstat`
  /// (``readFile(_:relativeTo:maximum:)``). Symbolic links are still followed with `stat`.
  static func unstampedFiles(under root: String) -> [(path: String, stamp: Stamp?)] {
    var out: [(String, Stamp?)] = []
    var directories: [String] = []
    var seen = Set<FileIdentity>()
    walk(root, relative: "", depth: 0, mode: .unstamped, into: &out, directories: &directories, seen: &seen)
    return out
  }

  /// ``files(under:known:)`` and ``directories(under:)`` from one walk.
  static func filesAndDirectories(under root: String, known: [String: Stamp] = [:]) -> (
    files: [(path: String, stamp: Stamp)], directories: [String]
  ) {
    var out: [(String, Stamp?)] = []
    var directories = [root]
    var seen = Set<FileIdentity>()
    walk(
      root, relative: "", depth: 0, mode: .stamped(known), into: &out, directories: &directories, seen: &seen)
    return (out.compactMap { entry in entry.1.map { (entry.0, $0) } }, directories)
  }

  /// `root` and every folder below it (paths starting with `root`), for change notifications.
  static func directories(under root: String) -> [String] {
    var out: [(String, Stamp?)] = []
    var directories = [root]
    var seen = Set<FileIdentity>()
    walk(root, relative: "", depth: 0, mode: .omitted, into: &out, directories: &directories, seen: &seen)
    return directories
  }

  /// What a walk does with entries the folder lists as regular files (`d_type`): each is a system call
  /// saved, and 10,000 mapping files are 10,000 path lookups.
  private enum RegularFiles {
    /// Stat them, except those whose stamp is known.
    case stamped([String: Stamp])
    /// List them without a stamp.
    case unstamped
    /// Leave them out (only folders are collected).
    case omitted
  }

  private static func walk(
    _ directory: String, relative: String, depth: Int, mode: RegularFiles, into out: inout [(String, Stamp?)],
    directories: inout [String], seen: inout Set<FileIdentity>
  ) {
    guard depth < 32 else { return }
    var own = stat()
    if stat(directory, &own) == 0 {
      guard seen.insert(FileIdentity(device: UInt64(own.st_dev), inode: UInt64(own.st_ino))).inserted else {
        return
      }
    }
    guard let dir = opendir(directory) else { return noteOpenFailure() }
    defer { closedir(dir) }
    let dirFD = dirfd(dir)
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
        let bytes = raw.bindMemory(to: UInt8.self)
        let length = strnlen(raw.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<length]), as: UTF8.self)
      }
      if name == "." || name == ".." || isIgnored(name) { continue }
      let rel = relative.isEmpty ? name : relative + "/" + name
      if Int(entry.pointee.d_type) == Int(DT_REG) {
        switch mode {
        case .omitted: continue
        case .unstamped:
          out.append((rel, nil))
          continue
        case .stamped(let known):
          // The known path's own string: the watcher's baseline then shares the load's 10,000 strings.
          if let k = known.index(forKey: rel) {
            out.append((known[k].key, known[k].value))
            continue
          }
        }
      }
      var st = stat()
      // Relative to the open folder: one path component to look up, not the whole path.
      guard dirFD >= 0 ? fstatat(dirFD, name, &st, 0) == 0 : stat(directory + "/" + name, &st) == 0 else {
        continue
      }
      switch st.st_mode & S_IFMT {
      case S_IFDIR:
        let path = directory + "/" + name
        directories.append(path)
        walk(
          path, relative: rel, depth: depth + 1, mode: mode, into: &out, directories: &directories,
          seen: &seen)
      case S_IFREG:
        if case .omitted = mode { continue }
        out.append((rel, Stamp(st)))
      default:
        continue
      }
    }
  }

  /// `path` made absolute (against the working folder), with `.` and `..` components and repeated or
  /// trailing slashes removed, links not followed (what Foundation's `standardizedFileURL` gives on Linux,
  /// without starting Foundation's URL machinery on the start-up path).
  static func standardized(_ path: String) -> String {
    var absolute = path
    if !path.hasPrefix("/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      if getcwd(&buffer, buffer.count) != nil {
        absolute =
          String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/"
          + path
      }
    }
    var parts: [Substring] = []
    for part in absolute.split(separator: "/") where part != "." {
      if part == ".." {
        if !parts.isEmpty { parts.removeLast() }
      } else {
        parts.append(part)
      }
    }
    return "/" + parts.joined(separator: "/")
  }

  /// The absolute path of `path` with every link followed (`realpath`), or nil when it does not exist.
  static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// True when `path` names a folder (links followed).
  static func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
  }

  /// True when something exists at `path` (links followed).
  static func exists(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0
  }

  /// The bytes of the regular file at `path`, or nil when it cannot be opened or read (one `open`,
  /// `fstat` and `read` per file; fixture loading reads thousands of small files).
  /// - Parameter maximum: larger files are refused (nil) rather than read.
  static func contents(_ path: String, maximum: Int = 1 << 30) -> [UInt8]? {
    readFile(path, maximum: maximum)?.bytes
  }

  /// The bytes of the regular file at `path` (relative to the open folder `directory`, or to the working
  /// folder) and its stamp from `fstat`, or nil when it cannot be opened or read.
  /// - Parameter maximum: larger files are refused (nil) rather than read.
  static func readFile(_ path: String, relativeTo directory: Int32 = AT_FDCWD, maximum: Int = 1 << 30) -> (
    bytes: [UInt8], stamp: Stamp
  )? {
    // O_NONBLOCK: opening a FIFO (a named pipe in `__files/`) returns at once instead of waiting for a
    // writer; the `S_IFREG` check below refuses it. Reads of a regular file ignore the flag.
    let fd = openat(directory, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else {
      noteOpenFailure()
      return nil
    }
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
      // A short read that reached the size `fstat` gave is the end of the file: no second `read` to see
      // it return 0 (10,000 system calls for 10,000 mapping files). A file that grew fills the spare byte
      // and is read on.
      if count == size, count < bytes.count { break }
    }
    bytes.removeLast(bytes.count - count)
    return (bytes, Stamp(st))
  }
}

extension FileTree.Stamp {
  /// The stamp of what `stat`/`fstat` returned.
  init(_ st: stat) {
    self.init(
      seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec), size: Int(st.st_size),
      device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
  }
}
