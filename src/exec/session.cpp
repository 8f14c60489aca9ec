#include "exec/session.h"

#include <algorithm>
#include <string>
#include <variant>

#include "synapse/error.h"

namespace synapse::exec {
namespace {

// The vocabulary: the rows of the table the token ids index.
int64_t vocabulary_of(const ir::Graph& graph) {
  for (const ir::Node& node : graph.nodes)
    if (const auto* embedding = std::get_if<ir::Embedding>(&node.op)) return graph.weight(embedding->table).shape[0];
  throw Error(ErrorKind::InvalidValue, "the graph has no token embedding");
}

const KernelRegistry& reference_kernels() {
  static const KernelRegistry registry;
  return registry;
}

}  // namespace

Session::Session(const Model& model, SessionOptions options)
    : model_(model),
      kv_(model.graph, model.graph.bounds.at("max_ctx"), options.kv),
      scheduler_(model, options.kernels ? *options.kernels : reference_kernels(), options.accumulation,
                 options.all_logits ? model.graph.bounds.at("chunk") : options.logits_rows),
      memory_(admit_memory(model, scheduler_, kv_, options.memory)),
      vocab_(vocabulary_of(model.graph)),
      positions_(static_cast<size_t>(scheduler_.chunk())) {
  kv_.charge_pages_to(&memory_.ledger);
  for (ir::NodeId out : model.graph.entry_outputs()) {
    const ir::Node& node = model.graph.node(out);
    if (std::get<ir::Output>(node.op).kind == ir::OutputKind::Logits)
      last_logits_.resize(static_cast<size_t>(model.graph.value(node.operands[0]).type.shape.back().size));
  }
  last_rows_.resize(static_cast<size_t>(scheduler_.logits_rows()) * last_logits_.size());
  if (memory_.plan.paging) {
    std::vector<std::string> files;
    for (const auto& file : model.files) files.push_back(file->path());
    auto residency = std::make_unique<memory::WeightResidency>(files, memory_.plan, options.memory.residency);
    // KV pages and the weight pool share what the budget leaves them.
    memory_.ledger.make_elastic(memory_.pool_category(), residency.get());
    scheduler_.page_weights(std::move(residency), options.memory.prefetch_depth);
  }
}

void Session::check(std::span<const int32_t> tokens) const {
  if (tokens.empty()) throw Error(ErrorKind::InvalidValue, "nothing to evaluate: no tokens");
  for (int32_t token : tokens)
    if (token < 0 || token >= vocab_)
      throw Error(ErrorKind::InvalidValue,
                  "token id " + std::to_string(token) + " outside the vocabulary of " + std::to_string(vocab_));
  if (position_ + static_cast<int64_t>(tokens.size()) > max_ctx())
    throw Error(ErrorKind::InvalidValue, std::to_string(position_) + " + " + std::to_string(tokens.size()) +
                                             " tokens exceed the context of " + std::to_string(max_ctx()));
}

template <class OnRows>
void Session::run_chunks(std::span<const int32_t> tokens, int64_t output_rows, OnRows&& rows) {
  check(tokens);
  const int64_t start = position_;
  set_running(true);
  try {
    for (size_t done = 0; done < tokens.size();) {
      const size_t count = std::min(tokens.size() - done, static_cast<size_t>(chunk()));
      for (size_t t = 0; t < count; ++t) positions_[t] = static_cast<int32_t>(position_ + static_cast<int64_t>(t));
      const StepInput step{tokens.subspan(done, count), std::span(positions_).first(count), steps_, output_rows};
      const std::span<const float> logits = scheduler_.run(step, kv_, &cancel_);
      if (logits.empty()) throw Error(ErrorKind::InvalidValue, "the step's logits are absent");
      rows(logits, count);
      position_ += static_cast<int64_t>(count);
      ++steps_;
      done += count;
    }
  } catch (...) {
    // Undo the partial eval: forget what it wrote, so a retry starts clean.
    position_ = start;
    kv_.truncate(start);
    set_running(false);
    throw;
  }
  set_running(false);
}

void Session::set_running(bool running) {
  const std::lock_guard lock(cancel_mutex_);
  running_ = running;
  cancel_.store(false, std::memory_order_relaxed);
}

void Session::cancel() {
  const std::lock_guard lock(cancel_mutex_);
  if (running_) cancel_.store(true, std::memory_order_relaxed);
}

std::span<const float> Session::eval(std::span<const int32_t> tokens) {
  run_chunks(tokens, 1, [&](std::span<const float> logits, size_t) {
    std::copy(logits.end() - static_cast<std::ptrdiff_t>(last_logits_.size()), logits.end(), last_logits_.begin());
  });
  return last_logits_;
}

std::vector<float> Session::eval_all(std::span<const int32_t> tokens) {
  // The scheduler plans a chunk of logits rows only for all-logits sessions.
  if (scheduler_.logits_rows() < scheduler_.chunk())
    throw Error(ErrorKind::InvalidValue, "every token's logits need a session created for all logits");
  std::vector<float> all;
  all.reserve(tokens.size() * last_logits_.size());
  run_chunks(tokens, 0, [&](std::span<const float> logits, size_t) { all.insert(all.end(), logits.begin(), logits.end()); });
  std::copy(all.end() - static_cast<std::ptrdiff_t>(last_logits_.size()), all.end(), last_logits_.begin());
  return all;
}

std::span<const float> Session::eval_last(std::span<const int32_t> tokens, int64_t rows) {
  const auto count = static_cast<int64_t>(tokens.size());
  if (rows < 1 || rows > count || rows > scheduler_.logits_rows() || count > chunk())
    throw Error(ErrorKind::InvalidValue, "eval_last: " + std::to_string(rows) + " logits rows of " +
                                             std::to_string(count) + " tokens; the session plans " +
                                             std::to_string(scheduler_.logits_rows()) + " rows, chunks of " +
                                             std::to_string(chunk()));
  const size_t size = static_cast<size_t>(rows) * last_logits_.size();
  run_chunks(tokens, rows, [&](std::span<const float> logits, size_t) {
    std::copy(logits.end() - static_cast<std::ptrdiff_t>(size), logits.end(), last_rows_.begin());
  });
  return std::span<const float>(last_rows_).first(size);
}

void Session::reset() { rewind(0); }

void Session::rewind(int64_t position) {
  if (position < 0 || position > position_)
    throw Error(ErrorKind::InvalidValue, "cannot rewind to position " + std::to_string(position) +
                                             ": the session holds " + std::to_string(position_) + " tokens");
  position_ = position;
  kv_.truncate(position);
}

}  // namespace synapse::exec
