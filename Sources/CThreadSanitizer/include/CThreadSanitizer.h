// CThreadSanitizer: ThreadSanitizer's acquire and release annotations, callable from Swift
// whether or not the program was built with it.
//
// The two entry points are declared weak, so a program linked without TSan's runtime has
// them as null and the inline wrappers below do nothing but test that null (a load and a
// branch the processor predicts). The Swift compiler's C importer is not told about
// `-sanitize=thread`, so `__has_feature(thread_sanitizer)` cannot choose at compile time.
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
