#if canImport(Glibc)
  import CLinuxShims
#endif

/// The process's heap as the C library keeps it.
package enum ProcessMemory {
  /// Gives the pages of freed heap memory back to the system. glibc keeps freed blocks in its free lists
  /// and returns only the top of the heap by itself: after a start that loads 10,000 stubs, about 1.6 MiB
  /// of file contents, parse trees and temporaries stayed resident. Called once the start is done.
  package static func releaseFreed() {
    #if canImport(Glibc)
      _ = malloc_trim(0)
    #endif
  }
}
