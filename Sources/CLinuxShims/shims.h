#ifndef CLINUXSHIMS_H
#define CLINUXSHIMS_H
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sched.h>
#endif
#endif
