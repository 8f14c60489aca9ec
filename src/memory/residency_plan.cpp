#include "memory/residency_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <variant>

#include "encoding/encoding.h"
#include "memory/memory_budget.h"
#include "synapse/error.h"

namespace synapse::memory {
namespace {

bool is_matrix(const ir::WeightDescriptor& d) { return d.shape.size() == 2; }

uint64_t row_stride_of(const ir::WeightDescriptor& d) {
  return row_bytes(d.encoding, static_cast<uint64_t>(d.shape[1]));
}

std::vector<bool> embedding_tables(const ir::Graph& graph) {
  std::vector<bool> tables(graph.weights.size(), false);
  for (const ir::Node& node : graph.nodes)
    if (const auto* embedding = std::get_if<ir::Embedding>(&node.op)) tables[embedding->table.index] = true;
  return tables;
}

// Weights some product multiplies by (MatMul, Logits).
std::vector<bool> product_weights(const ir::Graph& graph) {
  std::vector<bool> products(graph.weights.size(), false);
  for (const ir::Node& node : graph.nodes) {
    if (const auto* matmul = std::get_if<ir::MatMul>(&node.op)) products[matmul->weight.index] = true;
    if (const auto* logits = std::get_if<ir::Logits>(&node.op)) products[logits->weight.index] = true;
  }
  return products;
}

// Cuts every matrix a region reads into chunks.
void cut_chunks(const ir::Graph& graph, const PlanOptions& options, ResidencyPlan& plan) {
  const std::vector<bool> tables = embedding_tables(graph), products = product_weights(graph);
  std::vector<bool> used(graph.weights.size(), false), expert(graph.weights.size(), false);
  for (const ir::Region& region : graph.regions)
    for (ir::TensorId w : region.boundary.weights) {
      used[w.index] = true;
      if (region.kind.tag == ir::RegionKindTag::Expert) expert[w.index] = true;
    }
  plan.weights.resize(graph.weights.size());
  for (uint32_t i = 0; i < graph.weights.size(); ++i) {
    const ir::WeightDescriptor& d = graph.weights[i];
    if (!used[i] || !is_matrix(d) || (!options.unused_weights.empty() && options.unused_weights[i])) continue;
    const uint64_t row_stride = row_stride_of(d);
    const int64_t rows = d.shape[0];
    WeightChunks& wc = plan.weights[i];
    wc.row_stride = row_stride;
    wc.first = static_cast<uint32_t>(plan.chunks.size());
    wc.sliced = tables[i] || row_stride * static_cast<uint64_t>(rows) > options.slice_bytes;
    wc.slice_rows = wc.sliced ? std::clamp<int64_t>(static_cast<int64_t>(options.slice_bytes / row_stride), 1, rows)
                              : rows;
    for (int64_t begin = 0; begin < rows; begin += wc.slice_rows) {
      const int64_t end = std::min(rows, begin + wc.slice_rows);
      Chunk chunk;
      chunk.weight = ir::TensorId{i};
      chunk.file = d.file;
      chunk.offset = d.offset + static_cast<uint64_t>(begin) * row_stride;
      chunk.bytes = static_cast<uint64_t>(end - begin) * row_stride;
      chunk.row_begin = begin;
      chunk.row_end = end;
      chunk.expert = expert[i];
      chunk.rows_only = tables[i] && !products[i];
      plan.chunks.push_back(chunk);
      plan.weight_bytes += chunk.bytes;
      ++wc.count;
    }
  }
}

// The pool bytes a region needs at once: its whole-weight chunks and the
// largest slice it reads.
uint64_t region_need(const ir::Region& region, const ResidencyPlan& plan) {
  uint64_t whole = 0, slice = 0;
  for (ir::TensorId w : region.boundary.weights) {
    const WeightChunks& wc = plan.weights[w.index];
    for (uint32_t c = wc.first; c < wc.first + wc.count; ++c) {
      if (plan.chunks[c].rows_only) continue;  // read a row at a time, never held
      if (wc.sliced) {
        slice = std::max(slice, plan.chunks[c].bytes);
      } else {
        whole += plan.chunks[c].bytes;
      }
    }
  }
  return whole + slice;
}

}  // namespace

uint64_t matrix_weight_bytes(const ir::Graph& graph) {
  uint64_t bytes = 0;
  for (const ir::WeightDescriptor& d : graph.weights)
    if (is_matrix(d)) bytes += d.length;
  return bytes;
}

uint64_t widest_matrix_row(const ir::Graph& graph) {
  uint64_t widest = 0;
  for (const ir::WeightDescriptor& d : graph.weights)
    if (is_matrix(d)) widest = std::max(widest, row_stride_of(d));
  return widest;
}

ResidencyPlan plan_residency(const ir::Graph& graph, const PlanOptions& options) {
  ResidencyPlan plan;
  cut_chunks(graph, options, plan);
  plan.region_chunks.resize(graph.regions.size());
  for (size_t r = 0; r < graph.regions.size(); ++r) {
    const ir::Region& region = graph.regions[r];
    plan.has_experts |= region.kind.tag == ir::RegionKindTag::Expert;
    plan.min_pool_bytes = std::max(plan.min_pool_bytes, region_need(region, plan));
    for (ir::TensorId w : region.boundary.weights) {
      const WeightChunks& wc = plan.weights[w.index];
      if (wc.count > 0 && !wc.sliced) plan.region_chunks[r].push_back(wc.first);
    }
  }
  if (plan.weight_bytes <= options.weight_budget) {
    for (Chunk& chunk : plan.chunks) chunk.pinned = true;
    plan.pinned_bytes = plan.weight_bytes;
    return plan;
  }
  if (options.weight_budget < plan.min_pool_bytes) {
    MemoryLedger weights(options.weight_budget);
    weights.require(MemoryCategory::Weights, plan.min_pool_bytes);
  }
  plan.paging = true;
  // Room for the region running and `prefetch_depth` loading ahead, when
  // the budget allows; otherwise the bare minimum.
  const uint64_t pool_want = std::min(options.weight_budget,
                                      plan.min_pool_bytes * static_cast<uint64_t>(1 + std::max(0, options.prefetch_depth)));
  // Pin the chunks every token reads (not experts), largest first, while the
  // pool keeps its room: each pinned byte is a byte not loaded per token.
  std::vector<uint32_t> order;
  for (uint32_t c = 0; c < plan.chunks.size(); ++c)
    if (!plan.chunks[c].expert && !plan.chunks[c].rows_only) order.push_back(c);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return plan.chunks[a].bytes > plan.chunks[b].bytes; });
  for (uint32_t c : order) {
    Chunk& chunk = plan.chunks[c];
    if (plan.pinned_bytes + chunk.bytes + pool_want > options.weight_budget) continue;
    chunk.pinned = true;
    plan.pinned_bytes += chunk.bytes;
  }
  plan.pool_bytes = options.weight_budget - plan.pinned_bytes;
  return plan;
}

std::string describe(const ir::Graph& graph, const ResidencyPlan& plan) {
  std::string text = "weights: " + format_bytes(plan.weight_bytes) + " in " + std::to_string(plan.chunks.size()) +
                     " chunks";
  if (!plan.paging) return text + ", all resident\n";
  text += "; resident " + format_bytes(plan.pinned_bytes) + ", paged " +
          format_bytes(plan.weight_bytes - plan.pinned_bytes) + " through a pool of " +
          format_bytes(plan.pool_bytes) + " (one region needs at most " + format_bytes(plan.min_pool_bytes) + ")\n";
  // Per region kind: resident and paged bytes, and how many such regions.
  struct Tally {
    uint64_t resident = 0, paged = 0;
    size_t regions = 0;
  };
  std::map<std::string, Tally> kinds;
  std::vector<bool> counted(plan.chunks.size(), false);
  for (const ir::Region& region : graph.regions) {
    const std::string kind = ir::to_string(region.kind).substr(0, ir::to_string(region.kind).find('('));
    Tally& tally = kinds[kind];
    ++tally.regions;
    for (ir::TensorId w : region.boundary.weights) {
      const WeightChunks& wc = plan.weights[w.index];
      for (uint32_t c = wc.first; c < wc.first + wc.count; ++c) {
        if (counted[c]) continue;
        counted[c] = true;
        (plan.chunks[c].pinned ? tally.resident : tally.paged) += plan.chunks[c].bytes;
      }
    }
  }
  for (const auto& [kind, tally] : kinds) {
    if (tally.resident + tally.paged == 0) continue;
    text += "  " + kind + " (" + std::to_string(tally.regions) + "): resident " + format_bytes(tally.resident) +
            ", paged " + format_bytes(tally.paged) + "\n";
  }
  return text;
}

}  // namespace synapse::memory
