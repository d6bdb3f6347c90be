#ifndef CLINUXSHIMS_H
#define CLINUXSHIMS_H
// Linux-only declarations that the Glibc module does not export to Swift.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// accept4 is declared by <sys/socket.h> only under _GNU_SOURCE, which would make this module's view of
// the system headers differ from Glibc's; declare the one function instead.
extern int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

static inline int cshims_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  return accept4(fd, addr, len, flags);
}
#endif
#endif
