// Dropping a model from the page cache, so that the next run loads it as a
// first run does (synapse-bench-run's "cold" plans): the sizes of the page
// cache's folios, and so how much of a mapping the kernel maps in 2 MiB
// pages, then come from that load, not from the host's history (a host
// that pages out cold page cache brings pages back in 4 KiB pieces).
#pragma once

#include <string>

namespace synapse::bench {

// Asks the kernel to drop `path` (a file, or every file of a folder) from
// the page cache: posix_fadvise(POSIX_FADV_DONTNEED). Pages another process
// maps, or not yet written back, stay. False when a file could not be
// opened or advised.
bool drop_from_page_cache(const std::string& path);

}  // namespace synapse::bench
