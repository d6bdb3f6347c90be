#ifndef CLINUXSHIMS_H
#define CLINUXSHIMS_H
// Linux-only declarations that the Glibc module does not export to Swift.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sched.h>

// accept4 is declared by <sys/socket.h> only under _GNU_SOURCE, which would make this module's view of
// the system headers differ from Glibc's; declare the one function instead.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

static inline int cshims_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  return accept4(fd, addr, len, flags);
}

// sched_getaffinity is declared by <sched.h> only under _GNU_SOURCE too.
extern int sched_getaffinity(pid_t pid, size_t cpusetsize, cpu_set_t *mask);

/// The number of CPUs this thread may run on (its affinity mask, e.g. 1 under `taskset -c 0`), or 0 when
/// it cannot be read. `ProcessInfo.activeProcessorCount` counts the machine's (or cgroup's) CPUs instead.
static inline int cshims_affinity_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  int count = 0;
  for (size_t i = 0; i < sizeof set.__bits / sizeof set.__bits[0]; i++) count += __builtin_popcountl(set.__bits[i]);
  return count;
}
#endif
#endif
