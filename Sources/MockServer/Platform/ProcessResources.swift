#if canImport(Glibc)
  import CLinuxShims
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the process may use, read from the C library and the kernel directly: Foundation's
/// `ProcessInfo` reads the cgroup CPU quota through `URL` and `Data`, which at start paged in about 1 MiB
/// of Foundation's code that nothing else at start needs (issue 20's idle memory).
package enum ProcessResources {
  /// The cores this process may run on: its CPU affinity mask on Linux (`taskset -c 0` gives 1), the
  /// online processors elsewhere. At least 1.
  package static var availableCores: Int {
    #if os(Linux)
      let count = Int(cshims_affinity_cpu_count())
      if count > 0 { return count }
    #endif
    return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  }

  /// Gives the pages of freed heap memory back to the system. glibc keeps freed blocks in its free lists
  /// and returns only the top of the heap by itself: after a start that loads 10,000 stubs, about 1.6 MiB
  /// of file contents, parse trees and temporaries stayed resident. Called once the start is done.
  package static func releaseFreedMemory() {
    #if canImport(Glibc)
      _ = malloc_trim(0)
    #endif
  }

  /// The value of the environment variable `name`, or nil (`getenv`, without Foundation's copy of the
  /// whole environment).
  package static func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }
}
