#include "exec/session.h"

#include <algorithm>
#include <string>
#include <utility>
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

// What runs here: the layers a stage owns, or the model less dropped layers.
LayerDrop session_plan(const ir::Graph& graph, const SessionOptions& options) {
  if (!options.stage) return plan_layer_drop(graph, options.drop_layers);
  if (!options.drop_layers.empty())
    throw Error(ErrorKind::Usage, "a pipeline stage cannot drop layers as well");
  return plan_stage(graph, *options.stage);
}

const KernelRegistry& reference_kernels() {
  static const KernelRegistry registry;
  return registry;
}

}  // namespace

Session::Session(const Model& model, SessionOptions options)
    : model_(model),
      scheduler_(model, options.kernels ? *options.kernels : reference_kernels(), options.accumulation,
                 options.all_logits ? model.graph.bounds.at("chunk") : options.logits_rows,
                 session_plan(model.graph, options),
                 options.memory.budget.set() ? VectorReads::OwnPagesOnly : VectorReads::ReadAround),
      memory_(admit_memory(model, scheduler_,
                           KvState(model.graph, model.graph.bounds.at("max_ctx"), options.kv,
                                   scheduler_.layer_drop().slots),
                           options.memory)),
      vocab_(vocabulary_of(model.graph)),
      positions_(static_cast<size_t>(scheduler_.chunk())),
      batch_tokens_(static_cast<size_t>(scheduler_.chunk())) {
  sequences_.emplace_back(
      Sequence{KvState(model.graph, model.graph.bounds.at("max_ctx"), options.kv, scheduler_.layer_drop().slots)});
  sequences_[0]->kv.charge_pages_to(&memory_.ledger);
  step_sequences_.reserve(static_cast<size_t>(scheduler_.logits_rows()));
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

Session::Sequence& Session::sequence(SequenceId id) {
  return const_cast<Sequence&>(std::as_const(*this).sequence(id));
}

const Session::Sequence& Session::sequence(SequenceId id) const {
  if (id < 0 || static_cast<size_t>(id) >= sequences_.size() || !sequences_[static_cast<size_t>(id)])
    throw Error(ErrorKind::InvalidValue, "no sequence " + std::to_string(id) + " in this session");
  return *sequences_[static_cast<size_t>(id)];
}

void Session::check(const Sequence& sequence, std::span<const int32_t> tokens) const {
  if (tokens.empty()) throw Error(ErrorKind::InvalidValue, "nothing to evaluate: no tokens");
  for (int32_t token : tokens)
    if (token < 0 || token >= vocab_)
      throw Error(ErrorKind::InvalidValue,
                  "token id " + std::to_string(token) + " outside the vocabulary of " + std::to_string(vocab_));
  if (sequence.position + static_cast<int64_t>(tokens.size()) > max_ctx())
    throw Error(ErrorKind::InvalidValue, std::to_string(sequence.position) + " + " + std::to_string(tokens.size()) +
                                             " tokens exceed the context of " + std::to_string(max_ctx()));
}

template <class OnRows>
void Session::run_chunks(std::span<const int32_t> tokens, int64_t output_rows, OnRows&& rows,
                         std::span<const float> hidden) {
  Sequence& main = sequence(0);
  check(main, tokens);
  const int64_t start = main.position;
  set_running(true);
  try {
    for (size_t done = 0; done < tokens.size();) {
      const size_t count = std::min(tokens.size() - done, static_cast<size_t>(chunk()));
      for (size_t t = 0; t < count; ++t) positions_[t] = static_cast<int32_t>(main.position + static_cast<int64_t>(t));
      StepInput step{tokens.subspan(done, count), std::span(positions_).first(count), steps_, output_rows};
      if (!hidden.empty()) step.hidden = hidden.subspan(done * hidden_width(), count * hidden_width());
      const std::span<const float> logits = scheduler_.run(step, main.kv, &cancel_);
      if (logits.empty()) throw Error(ErrorKind::InvalidValue, "the step's logits are absent");
      rows(logits, count);
      main.position += static_cast<int64_t>(count);
      ++steps_;
      done += count;
    }
  } catch (...) {
    // Undo the partial eval: forget what it wrote, so a retry starts clean.
    main.position = start;
    main.kv.truncate(start);
    set_running(false);
    throw;
  }
  set_running(false);
}

void Session::check_stage_input(size_t tokens, std::span<const float> hidden) const {
  const bool takes_hidden = scheduler_.layer_drop().hidden_in;
  if (hidden.size() != (takes_hidden ? tokens * static_cast<size_t>(hidden_width()) : 0))
    throw Error(ErrorKind::InvalidValue, "a stage step of " + std::to_string(tokens) + " tokens takes " +
                                             (takes_hidden ? "its hidden vectors" : "no hidden vectors") + ", not " +
                                             std::to_string(hidden.size()) + " values");
}

std::span<const float> Session::eval_batch(std::span<const SequenceTokens> batch, std::span<const float> hidden) {
  if (batch.empty() || static_cast<int64_t>(batch.size()) > scheduler_.logits_rows())
    throw Error(ErrorKind::InvalidValue, "a batch of " + std::to_string(batch.size()) +
                                             " sequences; the session plans 1.." +
                                             std::to_string(scheduler_.logits_rows()) + " (its logits rows)");
  step_sequences_.clear();
  int64_t count = 0;
  for (const SequenceTokens& entry : batch) {
    Sequence& seq = sequence(entry.sequence);
    check(seq, entry.tokens);
    for (const StepSequence& other : step_sequences_)
      if (other.kv == &seq.kv)
        throw Error(ErrorKind::InvalidValue, "sequence " + std::to_string(entry.sequence) + " twice in one batch");
    const auto n = static_cast<int64_t>(entry.tokens.size());
    if (count + n > chunk())
      throw Error(ErrorKind::InvalidValue, "a batch of more than " + std::to_string(chunk()) + " tokens");
    for (int64_t t = 0; t < n; ++t) {
      batch_tokens_[static_cast<size_t>(count + t)] = entry.tokens[static_cast<size_t>(t)];
      positions_[static_cast<size_t>(count + t)] = static_cast<int32_t>(seq.position + t);
    }
    step_sequences_.push_back({&seq.kv, count, n});
    count += n;
  }
  const auto size = static_cast<size_t>(count);
  check_stage_input(size, hidden);
  StepInput step{std::span<const int32_t>(batch_tokens_).first(size), std::span(positions_).first(size), steps_, 1};
  step.sequences = step_sequences_;
  step.hidden = hidden;
  set_running(true);
  std::span<const float> logits;
  try {
    logits = scheduler_.run(step, *step_sequences_[0].kv, &cancel_);
    if (logits.empty()) throw Error(ErrorKind::InvalidValue, "the step's logits are absent");
  } catch (...) {
    for (size_t i = 0; i < batch.size(); ++i) {
      Sequence& seq = sequence(batch[i].sequence);
      seq.kv.truncate(seq.position);
    }
    set_running(false);
    throw;
  }
  for (const SequenceTokens& entry : batch) sequence(entry.sequence).position += static_cast<int64_t>(entry.tokens.size());
  ++steps_;
  set_running(false);
  return logits;  // a row per entry (each sequence asked for its last one), or a stage's hidden vectors
}

SequenceId Session::fork(SequenceId from) {
  Sequence copy{sequence(from).kv.fork(), sequence(from).position};
  for (size_t id = 1; id < sequences_.size(); ++id)
    if (!sequences_[id]) {
      sequences_[id].emplace(std::move(copy));
      return static_cast<SequenceId>(id);
    }
  sequences_.emplace_back(std::move(copy));
  return static_cast<SequenceId>(sequences_.size() - 1);
}

void Session::drop(SequenceId id) {
  sequence(id);  // throws for an unknown one
  if (id == 0) throw Error(ErrorKind::InvalidValue, "sequence 0 is the session's own; reset() empties it");
  sequences_[static_cast<size_t>(id)].reset();
}

void Session::begin_branch(SequenceId id) {
  Sequence& seq = sequence(id);
  if (seq.branch >= 0) throw Error(ErrorKind::InvalidValue, "sequence " + std::to_string(id) + " is in a branch already");
  seq.branch = seq.position;
}

void Session::commit_prefix(int64_t k, SequenceId id) {
  Sequence& seq = sequence(id);
  if (seq.branch < 0) throw Error(ErrorKind::InvalidValue, "sequence " + std::to_string(id) + " has no branch");
  if (k < 0 || seq.branch + k > seq.position)
    throw Error(ErrorKind::InvalidValue, "cannot commit " + std::to_string(k) + " tokens: the branch holds " +
                                             std::to_string(seq.position - seq.branch));
  const int64_t keep = seq.branch + k;
  seq.branch = -1;
  rewind(id, keep);
}

void Session::rollback_tail(SequenceId id) { commit_prefix(0, id); }

void Session::set_running(bool running) {
  const std::lock_guard lock(cancel_mutex_);
  running_ = running;
  cancel_.store(false, std::memory_order_relaxed);
}

void Session::cancel() {
  const std::lock_guard lock(cancel_mutex_);
  if (running_) cancel_.store(true, std::memory_order_relaxed);
}

void Session::require_whole_model(const char* call) const {
  if (scheduler_.layer_drop().placed)
    throw Error(ErrorKind::InvalidValue, std::string(call) + " on a pipeline stage, which evaluates with eval_stage or "
                                                             "eval_batch");
}

std::span<const float> Session::eval(std::span<const int32_t> tokens) {
  require_whole_model("eval");
  run_chunks(tokens, 1, [&](std::span<const float> logits, size_t) {
    std::copy(logits.end() - static_cast<std::ptrdiff_t>(last_logits_.size()), logits.end(), last_logits_.begin());
  });
  return last_logits_;
}

std::vector<float> Session::eval_all(std::span<const int32_t> tokens) {
  require_whole_model("eval_all");
  // The scheduler plans a chunk of logits rows only for all-logits sessions.
  if (scheduler_.logits_rows() < scheduler_.chunk())
    throw Error(ErrorKind::InvalidValue, "every token's logits need a session created for all logits");
  std::vector<float> all;
  all.reserve(tokens.size() * last_logits_.size());
  run_chunks(tokens, 0, [&](std::span<const float> logits, size_t) { all.insert(all.end(), logits.begin(), logits.end()); });
  std::copy(all.end() - static_cast<std::ptrdiff_t>(last_logits_.size()), all.end(), last_logits_.begin());
  return all;
}

std::span<const float> Session::eval_stage(std::span<const int32_t> tokens, std::span<const float> hidden) {
  if (static_cast<int64_t>(tokens.size()) > chunk())
    throw Error(ErrorKind::InvalidValue, "a stage step of " + std::to_string(tokens.size()) +
                                             " tokens; the session's chunk is " + std::to_string(chunk()));
  check_stage_input(tokens.size(), hidden);
  std::span<const float> out;
  run_chunks(tokens, 1, [&](std::span<const float> values, size_t) { out = values; }, hidden);
  if (scheduler_.layer_drop().hidden_out) return out;
  std::copy(out.end() - static_cast<std::ptrdiff_t>(last_logits_.size()), out.end(), last_logits_.begin());
  return last_logits_;
}

std::span<const float> Session::eval_last(std::span<const int32_t> tokens, int64_t rows) {
  require_whole_model("eval_last");
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

void Session::reset() { rewind(0, 0); }

void Session::rewind(SequenceId id, int64_t position) {
  Sequence& seq = sequence(id);
  if (position < 0 || position > seq.position)
    throw Error(ErrorKind::InvalidValue, "cannot rewind to position " + std::to_string(position) +
                                             ": the sequence holds " + std::to_string(seq.position) + " tokens");
  seq.position = position;
  seq.branch = std::min(seq.branch, position);
  seq.kv.truncate(position);
}

}  // namespace synapse::exec
