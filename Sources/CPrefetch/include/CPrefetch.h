#ifndef CPREFETCH_H
#define CPREFETCH_H

/// A hint that `address` will be read soon, so the reads of several independent cache
/// lines overlap instead of following one another. Inline: Swift has no such intrinsic,
/// and a call would cost more than the hint saves.
static inline void pg_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
