// CThreadSanitizer: ThreadSanitizer's acquire and release annotations, callable from Swift.
//
// `Locks.Lock` calls them only in the build `scripts/tsan` makes (PHOSRA_TSAN): the Swift
// compiler's C importer is not told about `-sanitize=thread`, so `__has_feature(
// thread_sanitizer)` cannot choose here. The entry points are declared weak all the same, so
// a PHOSRA_TSAN build without TSan's runtime still links (they are null, and the wrappers
// below do nothing).
#ifndef CTHREADSANITIZER_H
#define CTHREADSANITIZER_H

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

/// Tells TSan this thread now holds what was released at `address`: everything done before
/// that release happens before what this thread does next.
static inline __attribute__((always_inline)) void phosra_tsan_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

/// Tells TSan this thread hands over at `address`: the next acquire of it sees this thread's
/// writes so far.
static inline __attribute__((always_inline)) void phosra_tsan_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

#endif
