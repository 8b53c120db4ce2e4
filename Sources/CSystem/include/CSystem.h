// CSystem: what Swift's Glibc import lacks or gets wrong, and nothing else.
//
// Swift's Glibc module does not include <sys/epoll.h>, <sys/eventfd.h>,
// <sys/signalfd.h> or the rtnetlink headers, does not declare setns(2), imports
// `struct epoll_event` with the wrong layout (it is `__attribute__((packed))` on
// x86-64), and cannot call variadic `fcntl` with the GNU-only F_SETPIPE_SZ. Every
// function here is a thin, allocation-free pass-through: it returns what the system
// call returns (-1 with errno set on failure) and does not retry EINTR; the Swift side
// does that through `systemCall`.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdint.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <spawn.h>
#include <malloc.h>  // malloc_trim: the matcher bench returns freed memory before measuring

// MARK: - Constants the Swift import lacks or types awkwardly

static const uint32_t CS_EPOLLIN = EPOLLIN;
static const uint32_t CS_EPOLLOUT = EPOLLOUT;
/// The peer shut down its write side (a FIN arrived); reported with EPOLLIN.
static const uint32_t CS_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t CS_EPOLLERR = EPOLLERR;
static const uint32_t CS_EPOLLHUP = EPOLLHUP;
/// Wake only one of several epoll sets waiting on the same descriptor (ADD only).
static const uint32_t CS_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;
static const int CS_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CS_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CS_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
static const int CS_SO_REUSEPORT = SO_REUSEPORT;
static const int CS_SOCK_STREAM = SOCK_STREAM;
static const int CS_SOCK_DGRAM = SOCK_DGRAM;
static const int CS_SOCK_NONBLOCK_CLOEXEC = SOCK_NONBLOCK | SOCK_CLOEXEC;
static const int CS_MSG_NOSIGNAL = MSG_NOSIGNAL;
static const int CS_MSG_TRUNC = MSG_TRUNC;
/// The arrival interface of a datagram or connection (docs/network.md#who-is-served):
/// IP_PKTINFO and IPV6_RECVPKTINFO ask for it with each datagram, as an IP_PKTINFO or
/// IPV6_PKTINFO control message; on a TCP connection IP_PKTOPTIONS and
/// IPV6_2292PKTOPTIONS (the RFC 2292 option Linux kept for TCP) return the same message
/// for the packets that set it up.
static const int CS_IPPROTO_IP = IPPROTO_IP;
static const int CS_IPPROTO_IPV6 = IPPROTO_IPV6;
static const int CS_IP_PKTINFO = IP_PKTINFO;
static const int CS_IP_PKTOPTIONS = IP_PKTOPTIONS;
static const int CS_IPV6_RECVPKTINFO = IPV6_RECVPKTINFO;
static const int CS_IPV6_PKTINFO = IPV6_PKTINFO;
static const int CS_IPV6_2292PKTINFO = IPV6_2292PKTINFO;
static const int CS_IPV6_2292PKTOPTIONS = IPV6_2292PKTOPTIONS;
/// Room for the control messages one datagram brings: an IPV6_PKTINFO message takes 40
/// bytes aligned on a 64-bit system, IP_PKTINFO's 32, and an IPv4 datagram on a
/// dual-stack socket brings both.
#define CS_CONTROL_SIZE 80
/// The most entries one cs_epoll_wait, cs_recvmmsg or cs_sendmmsg call handles; larger
/// counts are clamped (the shim copies through arrays of this size on its stack).
#define CS_BATCH_MAX 256

// MARK: - epoll with plain fields

/// One readiness report, unpacked: `data` is what was given to cs_epoll_ctl.
typedef struct cs_epoll_result {
    uint64_t data;
    uint32_t events;
} cs_epoll_result;

/// epoll_create1(EPOLL_CLOEXEC).
int cs_epoll_create(void);
/// epoll_ctl(epfd, op, fd, {events, data.u64 = data}); `events` is ignored for DEL.
int cs_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// epoll_wait into `results[0..<max]` (max clamped to CS_BATCH_MAX); returns the count.
/// `timeout_ms` -1 waits forever, 0 polls.
int cs_epoll_wait(int epfd, cs_epoll_result *results, int max, int timeout_ms);

// MARK: - Sockets

/// socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0).
int cs_socket(int domain, int type);
/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; `address` receives the peer and
/// `*length` must hold sizeof(struct sockaddr_storage) on entry.
int cs_accept4(int fd, struct sockaddr_storage *address, socklen_t *length);
/// setsockopt for an `int` option.
int cs_setsockopt_int(int fd, int level, int name, int value);
/// getsockopt for an `int` option; the value is stored in `*value`.
int cs_getsockopt_int(int fd, int level, int name, int *value);

/// One datagram slot of a batch. The caller owns `bytes` (of `capacity` bytes) and
/// keeps it alive across the call.
/// cs_recvmmsg fills `length`, `address`, `address_length`, `flags` (MSG_TRUNC when the
/// datagram was longer than `capacity`) and the control messages that came with it
/// (`control`, `control_length` bytes: none unless the socket asked for some).
/// cs_sendmmsg sends `length` bytes to `address` (or to the connected peer when
/// `address_length` is 0), without control messages.
typedef struct cs_datagram {
    void *bytes;
    size_t capacity;
    size_t length;
    struct sockaddr_storage address;
    socklen_t address_length;
    int flags;
    size_t control_length;
    /// Aligned as struct cmsghdr must be.
    unsigned char control[CS_CONTROL_SIZE] __attribute__((aligned(sizeof(size_t))));
} cs_datagram;

/// recvmmsg into up to `count` slots (clamped to CS_BATCH_MAX) without waiting; returns
/// how many were filled, or -1 (EAGAIN when nothing was queued).
int cs_recvmmsg(int fd, cs_datagram *datagrams, unsigned count);
/// sendmmsg of up to `count` slots (clamped to CS_BATCH_MAX) with MSG_NOSIGNAL; returns
/// how many were sent (they go in order, so the rest start at the returned index).
int cs_sendmmsg(int fd, cs_datagram *datagrams, unsigned count);

// MARK: - Pipes and splice (the CONNECT tunnel relay)

static const unsigned CS_SPLICE_F_MOVE = 1;
static const unsigned CS_SPLICE_F_NONBLOCK = 2;
static const unsigned CS_SPLICE_F_MORE = 4;
/// pipe2(fds, O_NONBLOCK | O_CLOEXEC): fds[0] reads, fds[1] writes.
int cs_pipe2(int fds[2]);
/// The pipe's capacity in bytes: first set to `requested` (F_SETPIPE_SZ, page-rounded up)
/// when that is positive, then read back (F_GETPIPE_SZ) — the default is not always 64 KiB
/// (a user over pipe-user-pages-soft gets one page).
int cs_pipe_size(int fd, int requested);
/// Bytes queued in a TCP socket's send buffer and not yet acknowledged (ioctl SIOCOUTQ),
/// or -1 with errno.
int cs_unsent_bytes(int fd);
/// splice(fd_in, NULL, fd_out, NULL, length, flags); one end must be a pipe.
/// Returns the bytes moved, 0 at end of input, -1 with EAGAIN when either side would block.
ssize_t cs_splice(int fd_in, int fd_out, size_t length, unsigned flags);

// MARK: - Wake-ups and signals

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int cs_eventfd(void);
/// Adds 1 to the eventfd counter (wakes a waiting epoll); EAGAIN only at the counter's limit.
int cs_eventfd_signal(int fd);
/// Reads and resets the counter; -1 with EAGAIN when it was already zero.
int cs_eventfd_drain(int fd);
/// signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC). The signals must be blocked in every
/// thread, or one that does not block them takes the default action instead.
int cs_signalfd(const sigset_t *mask);
/// Reads up to `max` pending signals (clamped to 32) from a signalfd into `signals`;
/// returns how many, or -1 (EAGAIN when none is pending).
int cs_signalfd_read(int fd, int *signals, int max);
/// Names the calling thread (at most 15 bytes are kept), for ps, top and gdb. Returns 0
/// or an error number (pthread style: errno is not set).
int cs_set_thread_name(const char *name);
/// The calling thread's name into `name` (16 bytes hold any). Returns 0 or an error number.
int cs_thread_name(char *name, size_t size);

/// Puts the calling thread in SCHED_IDLE: it runs when no ordinary thread wants the CPU,
/// and a waking ordinary thread takes the CPU from it at once. Needs no privilege, and
/// cannot be undone without CAP_SYS_NICE. 0, or -1 with errno.
int cs_set_thread_idle(void);
/// 1 when the calling thread runs in SCHED_IDLE, else 0.
int cs_thread_is_idle(void);
/// Keeps the calling thread on one CPU (sched_setaffinity, a GNU extension Swift's Glibc
/// does not show). 0, or -1 with errno.
int cs_pin_thread_to_cpu(int cpu);

// MARK: - Pages

/// Grows (or shrinks) an anonymous mapping, moving it when it cannot grow in place
/// (mremap with MREMAP_MAYMOVE; Swift cannot call the variadic original). The new
/// address, or MAP_FAILED with errno.
void *cs_mremap(void *address, size_t old_size, size_t new_size);

// MARK: - rtnetlink (the neighbour tables) and network namespaces

// The kernel ABI the neighbour-dump parser reads (<linux/netlink.h>, <linux/rtnetlink.h>,
// <linux/neighbour.h>). Messages are in host byte order; addresses in network order.
static const uint16_t CS_NLMSG_NOOP = NLMSG_NOOP;
static const uint16_t CS_NLMSG_ERROR = NLMSG_ERROR;
static const uint16_t CS_NLMSG_DONE = NLMSG_DONE;
static const uint16_t CS_NLMSG_OVERRUN = NLMSG_OVERRUN;
static const uint16_t CS_NLM_F_REQUEST = NLM_F_REQUEST;
static const uint16_t CS_NLM_F_DUMP = NLM_F_DUMP;
static const uint16_t CS_RTM_NEWNEIGH = RTM_NEWNEIGH;
static const uint16_t CS_RTM_GETNEIGH = RTM_GETNEIGH;
static const uint16_t CS_NDA_DST = NDA_DST;
static const uint16_t CS_NDA_LLADDR = NDA_LLADDR;
/// Clears the flag bits (nested, network byte order) of rtattr.rta_type, leaving the type.
static const uint16_t CS_NLA_TYPE_MASK = (uint16_t)NLA_TYPE_MASK;
static const uint16_t CS_NUD_INCOMPLETE = NUD_INCOMPLETE;
static const uint16_t CS_NUD_FAILED = NUD_FAILED;
static const uint16_t CS_NUD_NOARP = NUD_NOARP;
static const uint8_t CS_AF_INET = AF_INET;
static const uint8_t CS_AF_INET6 = AF_INET6;
static const int CS_NLMSG_HEADER_SIZE = sizeof(struct nlmsghdr);
static const int CS_NDMSG_SIZE = sizeof(struct ndmsg);
static const int CS_RTATTR_SIZE = sizeof(struct rtattr);

/// socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE). It belongs to
/// the network namespace of the calling thread, for good.
int cs_netlink_route_socket(void);
/// sendto the kernel (nl_pid 0) without waiting.
ssize_t cs_netlink_send(int fd, const void *bytes, size_t length);
/// recvfrom without waiting, with MSG_TRUNC: returns the datagram's whole length, which
/// exceeds `capacity` when it was cut. `*sender` receives the sender's port (0: the kernel).
ssize_t cs_netlink_receive(int fd, void *buffer, size_t capacity, uint32_t *sender);
/// setns(fd, CLONE_NEWNET): moves the calling thread (only it) into the network namespace
/// `fd` refers to (e.g. an open /run/netns/NAME). Needs CAP_SYS_ADMIN.
int cs_setns_network(int fd);

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34, GNU-only): the spawned program
/// starts with every descriptor from `from` on closed, whatever its creator had open.
int cs_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/// adjtimex(2) with modes 0, which only reads (no privilege needed): the clock state it
/// returns (TIME_OK … TIME_ERROR, or -1 with errno set) and the status bits in `*status`.
int cs_clock_state(int *status);
/// The status bit the kernel keeps set until a time service (NTP) has set the clock.
extern const int CS_STA_UNSYNC;
/// adjtimex's state when the clock is not synchronised.
extern const int CS_TIME_ERROR;

#endif
