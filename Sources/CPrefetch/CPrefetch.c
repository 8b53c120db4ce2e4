// The module is its header; SwiftPM wants one source file in a C target.
#include "CPrefetch.h"
