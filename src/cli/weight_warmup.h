// Reads a large model's weight files into memory before the first step, with
// a progress report: the mapping would otherwise fault them in during the
// first prompt, a long silent wait on a big file (memory/page_cache_reader.h).
#pragma once

#include "exec/session.h"
#include "model/model.h"

namespace synapse::cli {

// Only for sessions that keep every weight resident (a paged session loads
// its pinned chunks itself) and files of at least 256 MiB together.
void warm_up_weights(const Model& model, const exec::Session& session);

}  // namespace synapse::cli
