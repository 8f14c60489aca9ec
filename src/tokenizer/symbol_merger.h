// The merge loop both BPE flavours share: the text starts as a list of
// symbols (characters); the adjacent pair with the best priority is merged,
// ties going to the leftmost pair, until no pair can merge.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

namespace synapse {

struct MergeSymbol {
  size_t offset = 0;  // into the text
  size_t length = 0;  // 0 once merged into its left neighbour
  int prev = -1, next = -1;
};

// `priority(left, right)` gives the priority of merging two adjacent pieces
// (lower merges first), or nullopt when they cannot merge. Returns the
// symbols; walk them from index 0 through `next`.
template <typename Priority>
std::vector<MergeSymbol> merge_symbols(std::string_view text, std::vector<MergeSymbol> symbols,
                                       Priority priority) {
  struct Candidate {
    double priority;
    int left, right;
    size_t length;  // of the merged piece, to spot stale candidates
    bool operator<(const Candidate& o) const {  // priority_queue keeps the greatest on top
      return priority != o.priority ? priority > o.priority : left > o.left;
    }
  };
  std::priority_queue<Candidate> queue;
  const auto piece = [&](int i) {
    const MergeSymbol& s = symbols[static_cast<size_t>(i)];
    return text.substr(s.offset, s.length);
  };
  const auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (const std::optional<double> p = priority(piece(left), piece(right))) {
      queue.push({*p, left, right, piece(left).size() + piece(right).size()});
    }
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    MergeSymbol& left = symbols[static_cast<size_t>(c.left)];
    MergeSymbol& right = symbols[static_cast<size_t>(c.right)];
    // Either side changed since the candidate was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != c.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = c.left;
    consider(left.prev, c.left);
    consider(c.left, left.next);
  }
  return symbols;
}

// One symbol per character of `text`: a well-formed UTF-8 sequence, or a
// single byte where the text is not UTF-8.
std::vector<MergeSymbol> character_symbols(std::string_view text);

}  // namespace synapse
