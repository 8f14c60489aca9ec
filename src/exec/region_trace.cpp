#include "exec/region_trace.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "encoding/encoding.h"
#include "format/part_file.h"
#include "synapse/error.h"

namespace synapse::exec {

namespace {

// The encoding holding most of a region's weight bytes ("q8_0", "f32", ...).
std::string main_encoding(const ir::Graph& graph, const ir::Region& region) {
  std::map<Encoding, uint64_t> bytes;
  for (ir::TensorId id : region.boundary.weights) {
    const auto& w = graph.weight(id);
    bytes[w.encoding] += w.length;
  }
  if (bytes.empty()) return "none";
  auto best = bytes.begin();
  for (auto it = bytes.begin(); it != bytes.end(); ++it)
    if (it->second > best->second) best = it;
  return encoding_info(best->first).name;
}

}  // namespace

std::string rank_trace_path(const std::string& path, int rank) {
  return rank == 0 ? path : path + ".rank" + std::to_string(rank);
}

RegionTraceWriter::RegionTraceWriter(const std::string& path, const Model& model, std::string session, int rank)
    : path_(path), part_(part_path_for(path)), session_(std::move(session)), rank_(rank) {
  file_ = std::fopen(part_.c_str(), "w");
  if (!file_)
    throw Error(ErrorKind::Io, std::string("cannot create trace file: ") + std::strerror(errno),
                Error::kNoOffset, part_);
  for (const auto& region : model.graph.regions) precision_.push_back(main_encoding(model.graph, region));
}

RegionTraceWriter::~RegionTraceWriter() {
  if (!file_) return;
  std::fclose(file_);  // not closed: the run failed, and leaves no trace file
  if (part_ != path_) std::remove(part_.c_str());
}

void RegionTraceWriter::write(const RegionEvent& e) {
  if (!file_) return;
  std::fprintf(file_,
               "{\"session\":\"%s\",\"step\":%" PRIu64 ",\"position\":%" PRId64 ",\"tokens\":%" PRId64
               ",\"region\":%u,\"kind\":\"%s\",\"layer\":%u,\"expert\":%u,\"outcome\":\"%s\","
               "\"provenance\":\"%s\",\"duration_ns\":%" PRId64 ",\"weight_bytes_touched\":%" PRIu64
               ",\"weight_bytes_loaded\":%" PRIu64 ",\"weight_bytes_prefetched\":%" PRIu64
               ",\"weight_bytes_resident\":%" PRIu64 ",\"device\":\"cpu\",\"rank\":%d,\"precision\":\"%s\","
               "\"kernel\":\"%s\"%s}\n",
               session_.c_str(), e.step, e.position, e.tokens, e.region.index, e.kind, e.layer, e.expert,
               to_string(e.outcome), e.dropped ? "UserDropped" : ir::to_string(e.provenance), e.duration_ns,
               e.weight_bytes_touched, e.weight_bytes_loaded, e.weight_bytes_prefetched, e.weight_bytes_resident, rank_,
               precision_.at(e.region.index).c_str(), e.kernel,
               e.quality_bounded ? ",\"mode\":\"QualityBounded\"" : "");
}

void RegionTraceWriter::write(const SpeculationTotals& t) {
  if (!file_) return;
  std::fprintf(file_,
               "{\"session\":\"%s\",\"event\":\"speculation\",\"drafted\":%" PRId64 ",\"accepted\":%" PRId64
               ",\"target_passes\":%" PRId64 ",\"committed\":%" PRId64 ",\"decode_ns\":%" PRId64 "}\n",
               session_.c_str(), t.drafted, t.accepted, t.target_passes, t.committed, t.decode_ns);
}

void RegionTraceWriter::write(const HopEvent& h) {
  if (!file_) return;
  std::fprintf(file_,
               "{\"session\":\"%s\",\"event\":\"hop\",\"kind\":\"%s\",\"from\":%d,\"to\":%d,\"step\":%" PRIu64
               ",\"bytes\":%" PRIu64 ",\"tokens\":%" PRId64 ",\"latency_ns\":%" PRId64 ",\"wait_ns\":%" PRId64
               ",\"rank\":%d}\n",
               session_.c_str(), h.kind, h.from, h.to, h.step, h.bytes, h.tokens, h.latency_ns, h.wait_ns, rank_);
}

void RegionTraceWriter::close() {
  if (!file_) return;
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed || (part_ != path_ && std::rename(part_.c_str(), path_.c_str()) != 0)) {
    if (part_ != path_) std::remove(part_.c_str());
    throw Error(ErrorKind::Io, "could not write the trace file", Error::kNoOffset, path_);
  }
}

}  // namespace synapse::exec
