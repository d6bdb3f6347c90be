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
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// accept4 is declared by <sys/socket.h> only under _GNU_SOURCE, which would make this module's view of
// the system headers differ from Glibc's; declare the one function instead.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

// sched_getaffinity is declared by <sched.h> only under _GNU_SOURCE too.
extern int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask);

/// The number of CPUs this process may run on (its affinity mask), or 0 when it cannot be read.
static inline int cshims_affinity_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  const unsigned long *words = (const unsigned long *)&set;
  int count = 0;
  for (size_t i = 0; i < sizeof set / sizeof *words; i++) count += __builtin_popcountl(words[i]);
  return count;
}

// pthread_setname_np is declared by <pthread.h> only under _GNU_SOURCE too.
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (at most 15 bytes; a longer name is refused and the thread keeps its name).
static inline int cshims_set_thread_name(const char *name) {
  return pthread_setname_np(pthread_self(), name);
}

static inline int cshims_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  return accept4(fd, addr, len, flags);
}
#endif
#endif
