// A generation session (SPEC §7): owns the KV state and the current
// position, and evaluates tokens through the region scheduler, prompts
// longer than a chunk in chunks, decode steps one token at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "exec/kernel_registry.h"
#include "exec/kv_state.h"
#include "exec/memory_admission.h"
#include "exec/pipeline_stage.h"
#include "exec/scheduler.h"
#include "model/model.h"

namespace synapse::exec {

struct SessionOptions {
  ref::Accumulation accumulation = ref::Accumulation::F32;
  // How KV rows are stored (F16 by default) and paged.
  KvLayout kv;
  // Plan logits for every token of a step, as eval_all needs; otherwise
  // steps return the last token's row only, and buffers hold one row.
  bool all_logits = false;
  // The logits rows eval_last can return: the last tokens of one step (a
  // speculative verifier asks for one row per drafted token).
  int64_t logits_rows = 1;
  // Kernels to bind regions to; null: the reference kernel for every region.
  std::shared_ptr<const KernelRegistry> kernels;
  // A memory budget; weights page in and out to stay within it.
  MemoryOptions memory;
  // Layers that never run (--drop-layers, layer_drop.h): a QualityBounded
  // session. Throws Error(Usage) for a layer the model does not have.
  std::vector<uint32_t> drop_layers;
  // A pipeline stage (pipeline_stage.h): the layers this session runs, the
  // others being placed on other stages; evaluate with eval_stage. Not with
  // drop_layers (Error(Usage)).
  std::optional<StageRange> stage;
};

// A sequence of a session: sequence 0 exists from the start; fork() makes
// more (SPEC §7).
using SequenceId = int32_t;

// The tokens one sequence adds in a batched step.
struct SequenceTokens {
  SequenceId sequence = 0;
  std::span<const int32_t> tokens;
};

class Session {
 public:
  // The model must outlive the session; its graph's bounds give chunk and
  // max_ctx. Throws Error(InsufficientMemory) when options.memory's budget
  // cannot hold the session, before any compute. KV pages are charged to
  // the budget as they are allocated, evicting cached weight chunks when
  // weights page; an eval that needs a page the budget cannot hold throws
  // Error(InsufficientMemory) naming kv, and is undone. Freed pages (reset,
  // rewind, an undone eval) return to the weight cache.
  explicit Session(const Model& model, SessionOptions options = {});

  // Evaluates tokens at the next positions and returns the last token's
  // logits, valid until the next call. Throws Error(InvalidValue) before
  // any compute for no tokens, a token outside the vocabulary, a context
  // overflow or a pipeline stage's session (eval_all and eval_last too); Cancelled when cancel() is called meanwhile. After a throw the
  // session is as it was before the call.
  std::span<const float> eval(std::span<const int32_t> tokens);
  // The same, returning every token's logits, [tokens, vocab]. Throws
  // Error(InvalidValue) unless the session was created with all_logits.
  std::vector<float> eval_all(std::span<const int32_t> tokens);
  // The same, returning the logits of the last `rows` tokens, [rows, vocab],
  // valid until the next call. Throws Error(InvalidValue) for rows outside
  // [1, tokens] or past the session's logits_rows, or tokens past one chunk.
  std::span<const float> eval_last(std::span<const int32_t> tokens, int64_t rows);

  // A pipeline stage's step (SessionOptions::stage) of 1..chunk() tokens at
  // the next positions, with the previous stage's hidden vectors [tokens,
  // hidden_width()] when this stage does not embed (else empty). Returns
  // this stage's hidden vectors [tokens, hidden_width()] when a later stage
  // follows, else the last token's logits; valid until the next call.
  // Throws as eval, and Error(InvalidValue) for more than a chunk of tokens
  // or hidden vectors of the wrong size.
  std::span<const float> eval_stage(std::span<const int32_t> tokens, std::span<const float> hidden);
  int64_t hidden_width() const { return scheduler_.hidden_width(); }

  // Several sequences in one pass over the regions (weights read once for
  // all): each entry's tokens at its sequence's next positions, at most one
  // entry per sequence and chunk() tokens in all. Returns each entry's last
  // token's logits, [entries, vocab], valid until the next call; a
  // sequence's logits are the same bits whatever else is in the batch.
  // Throws Error(InvalidValue) before any compute for more entries than the
  // session's logits_rows, an unknown or repeated sequence, or what eval
  // refuses; after a throw every sequence is as it was. A pipeline stage
  // takes the previous stage's hidden vectors for the batch's tokens as
  // eval_stage does, and returns its own, [tokens, hidden_width()], when a
  // later stage follows.
  std::span<const float> eval_batch(std::span<const SequenceTokens> batch, std::span<const float> hidden = {});

  // A new sequence holding `from`'s tokens; it shares their KV pages until
  // one of the two writes into a shared page (copy-on-write).
  SequenceId fork(SequenceId from = 0);
  // Frees a sequence made by fork(), and its pages that no other holds.
  void drop(SequenceId id);

  // A branch of `id` (speculation): tokens evaluated after begin_branch()
  // stay tentative until commit_prefix(k) keeps the first k of them and
  // forgets the rest, or rollback_tail() forgets them all; either ends the
  // branch. Throws Error(InvalidValue) for a branch already begun (or none
  // to end), and for k past what the branch evaluated.
  void begin_branch(SequenceId id = 0);
  void commit_prefix(int64_t k, SequenceId id = 0);
  void rollback_tail(SequenceId id = 0);

  // Makes the running eval throw Cancelled between regions; with no eval
  // running it does nothing (the next eval runs). Safe to call from another
  // thread.
  void cancel();
  // Forgets every token: back to position 0.
  void reset();
  // Forgets the tokens at `position` and after, keeping those before it (a
  // chat whose re-rendered prompt diverges from what was evaluated); KV
  // pages holding only those are freed. Throws Error(InvalidValue) for a
  // position outside [0, position()].
  void rewind(int64_t position) { rewind(0, position); }
  void rewind(SequenceId id, int64_t position);

  int64_t position(SequenceId id = 0) const { return sequence(id).position; }
  int64_t max_ctx() const { return kv().max_ctx(); }
  int64_t chunk() const { return scheduler_.chunk(); }
  int64_t vocab() const { return vocab_; }
  const KvState& kv(SequenceId id = 0) const { return sequence(id).kv; }
  RegionScheduler& scheduler() { return scheduler_; }
  const RegionScheduler& scheduler() const { return scheduler_; }
  const MemoryAdmission& memory() const { return memory_; }
  // The residency manager when weights page; null when all are resident.
  const memory::WeightResidency* residency() const { return scheduler_.residency(); }
  // What the budget holds and what pages, for people.
  std::string memory_plan() const { return describe(model_, memory_); }

 private:
  struct Sequence {
    KvState kv;
    int64_t position = 0;
    int64_t branch = -1;  // where a begun branch starts
  };
  Sequence& sequence(SequenceId id);
  const Sequence& sequence(SequenceId id) const;
  void check(const Sequence& sequence, std::span<const int32_t> tokens) const;
  // Throws Error(InvalidValue) unless hidden holds what a stage step of
  // `tokens` tokens takes: their hidden vectors, or none for the first stage.
  void check_stage_input(size_t tokens, std::span<const float> hidden) const;
  // Throws Error(InvalidValue) for a pipeline stage: its steps return
  // hidden vectors or need them, not a whole model's logits.
  void require_whole_model(const char* call) const;
  // Runs tokens in chunks; for each chunk, hands the logits rows of its
  // last output_rows tokens (0: all) to `rows`.
  template <class OnRows>
  void run_chunks(std::span<const int32_t> tokens, int64_t output_rows, OnRows&& rows,
                  std::span<const float> hidden = {});

  const Model& model_;
  RegionScheduler scheduler_;
  MemoryAdmission memory_;
  // By SequenceId; a dropped sequence leaves an empty place. After memory_:
  // their pages release the ledger (and the weight pool) as they go.
  std::vector<std::optional<Sequence>> sequences_;
  int64_t vocab_ = 0;
  uint64_t steps_ = 0;
  std::vector<StepSequence> step_sequences_;  // a batch's, sized once
  std::vector<int32_t> positions_;     // one chunk's positions
  std::vector<int32_t> batch_tokens_;  // a batch's tokens, side by side
  std::vector<float> last_logits_;
  std::vector<float> last_rows_;  // eval_last's rows, sized once
  // Marks an eval running (or not) and clears a cancellation, under
  // cancel_mutex_ so that a cancel() racing the end of an eval cannot
  // outlive it.
  void set_running(bool running);

  std::mutex cancel_mutex_;
  bool running_ = false;  // guarded by cancel_mutex_
  std::atomic<bool> cancel_{false};  // read by the scheduler between regions
};

}  // namespace synapse::exec
