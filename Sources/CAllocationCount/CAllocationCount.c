// Counts heap allocations per thread, for tests that show a path allocates nothing
// (counted, not timed). Linked only into the test executable: its malloc family stands in
// front of glibc's (which it calls through the __libc_ names glibc exports), so every
// allocation of the process passes here — Swift's runtime included. A thread counts only
// between begin and end, so other threads and the rest of the suite pay one test of a
// thread-local flag.
#include "CAllocationCount.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CS_SANITIZED 1
#endif
#endif

#ifdef CS_SANITIZED

// A sanitizer's runtime owns malloc: nothing is counted there.
void cs_allocations_begin(void) {}
uint64_t cs_allocations_end(void) { return 0; }
int64_t cs_allocations_net_bytes(void) { return 0; }
uint64_t cs_allocations_largest(void) { return 0; }
int cs_allocations_counted(void) { return 0; }

#else

#include <errno.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int counting;
static __thread uint64_t allocations;
// Bytes of the chunks allocated on this thread less those freed on it while counting: a
// chunk's usable size plus the word of glibc's header in front of it.
static __thread int64_t net_bytes;
// The biggest single allocation asked for while counting, in bytes.
static __thread uint64_t largest;

static inline int64_t chunk_bytes(void *pointer) {
    return pointer == NULL ? 0 : (int64_t)malloc_usable_size(pointer) + (int64_t)sizeof(size_t);
}

static inline void *note(void *pointer, size_t size) {
    if (counting) {
        allocations++;
        net_bytes += chunk_bytes(pointer);
        if (size > largest) largest = size;
    }
    return pointer;
}

void *malloc(size_t size) { return note(__libc_malloc(size), size); }

void *calloc(size_t count, size_t size) { return note(__libc_calloc(count, size), count * size); }

void *realloc(void *pointer, size_t size) {
    int64_t before = counting ? chunk_bytes(pointer) : 0;
    void *moved = __libc_realloc(pointer, size);
    // A failed realloc leaves the old chunk in place; realloc to 0 frees it.
    if (moved != NULL || size == 0) net_bytes -= before;
    return note(moved, size);
}

void *memalign(size_t alignment, size_t size) { return note(__libc_memalign(alignment, size), size); }

void *aligned_alloc(size_t alignment, size_t size) { return note(__libc_memalign(alignment, size), size); }

int posix_memalign(void **out, size_t alignment, size_t size) {
    void *pointer = note(__libc_memalign(alignment, size), size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

void free(void *pointer) {
    if (counting) net_bytes -= chunk_bytes(pointer);
    __libc_free(pointer);
}

void cs_allocations_begin(void) {
    allocations = 0;
    net_bytes = 0;
    largest = 0;
    counting = 1;
}

int64_t cs_allocations_net_bytes(void) { return net_bytes; }

uint64_t cs_allocations_largest(void) { return largest; }

uint64_t cs_allocations_end(void) {
    counting = 0;
    return allocations;
}

int cs_allocations_counted(void) {
    cs_allocations_begin();
    void *probe = malloc(24);
    __asm__ volatile("" : : "r"(probe) : "memory");
    free(probe);
    return cs_allocations_end() == 1;
}

#endif
