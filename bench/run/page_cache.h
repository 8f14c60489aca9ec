// Putting a model back in the page cache as a first read leaves it, before
// each run of synapse-bench-run's "reread" plans: a host that pages cold
// page cache out brings pages back in 4 KiB pieces, which a mapping maps in
// 4 KiB pages and decode then streams slower, while a file read in one
// sequential pass sits in 2 MiB folios. Both engines then start from the
// same page cache, whatever the host did to it in between, and neither
// reads the disk while it is timed.
#pragma once

#include <string>

namespace synapse::bench {

// Asks the kernel to drop `path` (a file, or every file of a folder) from
// the page cache: posix_fadvise(POSIX_FADV_DONTNEED). Pages another process
// maps, or not yet written back, stay. False when a file could not be
// opened or advised.
bool drop_from_page_cache(const std::string& path);

// Drops `path` as above, then reads it through once, in order. False when a
// file could not be opened, advised or read to its end.
bool reread_into_page_cache(const std::string& path);

}  // namespace synapse::bench
