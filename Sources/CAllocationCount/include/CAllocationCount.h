#ifndef C_ALLOCATION_COUNT_H
#define C_ALLOCATION_COUNT_H

#include <stdint.h>

/// Starts counting the heap allocations made on the calling thread (from zero).
void cs_allocations_begin(void);

/// Stops counting on the calling thread and returns how many allocations it saw.
uint64_t cs_allocations_end(void);

/// The bytes of heap the calling thread allocated and did not free since the last begin:
/// each chunk's usable size and its header word.
int64_t cs_allocations_net_bytes(void);

/// The size of the biggest single allocation the calling thread asked for since the last
/// begin.
uint64_t cs_allocations_largest(void);

/// 1 when this process's malloc goes through the counter (not under a sanitizer, which
/// brings its own allocator).
int cs_allocations_counted(void);

#endif
