// Thin pass-throughs; see CSystem.h for each contract. No function allocates: batches
// go through arrays on this stack, bounded by CS_BATCH_MAX.
#define _GNU_SOURCE
#include "CSystem.h"

#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/timex.h>

int cs_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cs_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &event);
}

int cs_epoll_wait(int epfd, cs_epoll_result *results, int max, int timeout_ms) {
    struct epoll_event events[CS_BATCH_MAX];
    if (max > CS_BATCH_MAX) max = CS_BATCH_MAX;
    if (max < 1) max = 1;
    int count = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < count; i++) {
        results[i].data = events[i].data.u64;
        results[i].events = events[i].events;
    }
    return count;
}

int cs_socket(int domain, int type) { return socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }

int cs_accept4(int fd, struct sockaddr_storage *address, socklen_t *length) {
    return accept4(fd, (struct sockaddr *)address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cs_setsockopt_int(int fd, int level, int name, int value) {
    return setsockopt(fd, level, name, &value, sizeof value);
}

int cs_getsockopt_int(int fd, int level, int name, int *value) {
    socklen_t length = sizeof *value;
    return getsockopt(fd, level, name, value, &length);
}

// Builds the kernel's mmsghdr/iovec view of the caller's slots.
static unsigned prepare(cs_datagram *datagrams, unsigned count, struct mmsghdr *headers,
                        struct iovec *vectors, int receiving) {
    if (count > CS_BATCH_MAX) count = CS_BATCH_MAX;
    memset(headers, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = datagrams[i].bytes;
        vectors[i].iov_len = receiving ? datagrams[i].capacity : datagrams[i].length;
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
        if (receiving || datagrams[i].address_length > 0) {
            headers[i].msg_hdr.msg_name = &datagrams[i].address;
            headers[i].msg_hdr.msg_namelen =
                receiving ? sizeof(struct sockaddr_storage) : datagrams[i].address_length;
        }
        if (receiving) {
            headers[i].msg_hdr.msg_control = datagrams[i].control;
            headers[i].msg_hdr.msg_controllen = CS_CONTROL_SIZE;
        }
    }
    return count;
}

int cs_recvmmsg(int fd, cs_datagram *datagrams, unsigned count) {
    struct mmsghdr headers[CS_BATCH_MAX];
    struct iovec vectors[CS_BATCH_MAX];
    count = prepare(datagrams, count, headers, vectors, 1);
    int received = recvmmsg(fd, headers, count, MSG_DONTWAIT, NULL);
    for (int i = 0; i < received; i++) {
        datagrams[i].length = headers[i].msg_len;
        datagrams[i].address_length = headers[i].msg_hdr.msg_namelen;
        datagrams[i].flags = headers[i].msg_hdr.msg_flags;
        datagrams[i].control_length = headers[i].msg_hdr.msg_controllen;
    }
    return received;
}

int cs_sendmmsg(int fd, cs_datagram *datagrams, unsigned count) {
    struct mmsghdr headers[CS_BATCH_MAX];
    struct iovec vectors[CS_BATCH_MAX];
    count = prepare(datagrams, count, headers, vectors, 0);
    return sendmmsg(fd, headers, count, MSG_DONTWAIT | MSG_NOSIGNAL);
}

int cs_pipe2(int fds[2]) { return pipe2(fds, O_NONBLOCK | O_CLOEXEC); }

int cs_pipe_size(int fd, int requested) {
    if (requested > 0 && fcntl(fd, F_SETPIPE_SZ, requested) < 0) return -1;
    return fcntl(fd, F_GETPIPE_SZ);
}

int cs_unsent_bytes(int fd) {
    int queued = 0;
    if (ioctl(fd, SIOCOUTQ, &queued) < 0) return -1;
    return queued;
}

ssize_t cs_splice(int fd_in, int fd_out, size_t length, unsigned flags) {
    return splice(fd_in, NULL, fd_out, NULL, length, flags);
}

int cs_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int cs_eventfd_signal(int fd) {
    uint64_t one = 1;
    return (int)write(fd, &one, sizeof one);
}

int cs_eventfd_drain(int fd) {
    uint64_t counter;
    return (int)read(fd, &counter, sizeof counter);
}

int cs_signalfd(const sigset_t *mask) { return signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC); }

int cs_signalfd_read(int fd, int *signals, int max) {
    struct signalfd_siginfo records[32];
    if (max > 32) max = 32;
    if (max < 1) max = 1;
    ssize_t bytes = read(fd, records, sizeof(struct signalfd_siginfo) * (size_t)max);
    if (bytes < 0) return -1;
    int count = (int)(bytes / (ssize_t)sizeof(struct signalfd_siginfo));
    for (int i = 0; i < count; i++) signals[i] = (int)records[i].ssi_signo;
    return count;
}

int cs_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    return pthread_setname_np(pthread_self(), truncated);
}

int cs_thread_name(char *name, size_t size) {
    return pthread_getname_np(pthread_self(), name, size);
}

int cs_set_thread_idle(void) {
    struct sched_param param;
    memset(&param, 0, sizeof param);
    return sched_setscheduler(0, SCHED_IDLE, &param);
}

int cs_thread_is_idle(void) { return sched_getscheduler(0) == SCHED_IDLE; }

int cs_pin_thread_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

int cs_netlink_route_socket(void) {
    return socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
}

ssize_t cs_netlink_send(int fd, const void *bytes, size_t length) {
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    return sendto(fd, bytes, length, MSG_DONTWAIT, (struct sockaddr *)&kernel, sizeof kernel);
}

ssize_t cs_netlink_receive(int fd, void *buffer, size_t capacity, uint32_t *sender) {
    struct sockaddr_nl from;
    memset(&from, 0, sizeof from);
    socklen_t length = sizeof from;
    ssize_t received = recvfrom(fd, buffer, capacity, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &length);
    if (received >= 0) *sender = from.nl_pid;
    return received;
}

int cs_setns_network(int fd) { return setns(fd, CLONE_NEWNET); }

int cs_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

const int CS_STA_UNSYNC = STA_UNSYNC;
const int CS_TIME_ERROR = TIME_ERROR;

int cs_clock_state(int *status) {
    struct timex reading;
    memset(&reading, 0, sizeof reading);
    int state = adjtimex(&reading);
    *status = reading.status;
    return state;
}

void *cs_mremap(void *address, size_t old_size, size_t new_size) {
    return mremap(address, old_size, new_size, MREMAP_MAYMOVE);
}
