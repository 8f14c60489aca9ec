// A deterministic children's-story text of any length, for tests that
// need prose (perplexity, long prompts): sentences drawn from fixed
// templates and word lists with a seeded generator.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace synapse::test {

inline std::string story_text(size_t min_chars, uint32_t seed = 1) {
  const std::vector<std::string> names = {"Lily", "Tim", "Max", "Sue", "Ben", "Mia"};
  const std::vector<std::string> things = {"ball", "kite", "dog", "cat", "tree", "box", "car", "bird"};
  const std::vector<std::string> places = {"park", "garden", "house", "forest", "school", "river"};
  const std::vector<std::string> feelings = {"happy", "sad", "scared", "proud", "tired", "excited"};
  std::mt19937 rng(seed);
  const auto pick = [&](const std::vector<std::string>& words) -> const std::string& {
    return words[std::uniform_int_distribution<size_t>(0, words.size() - 1)(rng)];
  };
  std::string text;
  while (text.size() < min_chars) {
    const std::string& name = pick(names);
    text += "Once upon a time, there was a little child named " + name + ". ";
    text += name + " had a big " + pick(things) + " and liked to play in the " + pick(places) + ". ";
    text += "One day, " + name + " saw a " + pick(things) + " near the " + pick(places) + ". ";
    text += name + " felt " + pick(feelings) + " and said, \"Look at the " + pick(things) + "!\" ";
    text += "Then " + name + " went home and was very " + pick(feelings) + ".\n\n";
  }
  return text;
}

}  // namespace synapse::test
