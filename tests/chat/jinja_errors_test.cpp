// Unsupported constructs are named with their line; malformed and hostile
// templates end in a synapse::Error, never a crash or a hang.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "synapse/error.h"

namespace synapse::chat {
namespace {

// The error parsing, then rendering, `source` throws (fails the test if none).
Error error_of(std::string_view source) {
  try {
    const std::vector<ChatMessage> messages = {{"user", "hi"}};
    ChatTemplate::parse(source).render(messages, RenderOptions{});
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << source.substr(0, 80);
  return Error(ErrorKind::InvalidValue, "");
}

bool mentions(const Error& e, std::string_view text) { return std::string(e.what()).find(text) != std::string::npos; }

TEST(JinjaUnsupported, StatementIsNamedWithItsLine) {
  const Error e = error_of("line one\n{% call foo() %}x{% endcall %}");
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  EXPECT_TRUE(mentions(e, "{% call %}")) << e.what();
  EXPECT_TRUE(mentions(e, "line 2")) << e.what();
}

TEST(JinjaUnsupported, FilterTestAndMethodAreNamed) {
  Error filter = error_of("{{ 'a' | wordwrap(3) }}");
  EXPECT_EQ(filter.kind(), ErrorKind::Unsupported);
  EXPECT_TRUE(mentions(filter, "filter 'wordwrap'")) << filter.what();
  Error test = error_of("\n\n{{ 1 is prime }}");
  EXPECT_TRUE(mentions(test, "test 'prime'")) << test.what();
  EXPECT_TRUE(mentions(test, "line 3")) << test.what();
  Error method = error_of("{{ 'a'.zfill(3) }}");
  EXPECT_TRUE(mentions(method, "zfill")) << method.what();
  EXPECT_TRUE(mentions(error_of("{% include 'x.jinja' %}"), "{% include %}"));
  EXPECT_TRUE(mentions(error_of("{% for x in y recursive %}{% endfor %}"), "recursive"));
}

TEST(JinjaUnsupported, ListMutationIsRefusedAsInTheSandbox) {
  EXPECT_TRUE(mentions(error_of("{% set l = [] %}{{ l.append(1) }}"), "append"));
}

TEST(JinjaSyntax, MalformedTemplatesAreInvalidValueWithLine) {
  for (const char* source : {"{{ 1 + }}", "{% if x %}no end", "{% endif %}", "{{ 'unterminated }}", "{{ x",
                             "{% for %}", "{# never closed", "{% set = 1 %}", "{{ (1 }}", "{{ [1, }}", "{% frobnicate %}",
                             "{{ 1 ^ 2 }}", "{{ f(a=1, 2) }}"}) {
    const Error e = error_of(source);
    EXPECT_TRUE(e.kind() == ErrorKind::InvalidValue || e.kind() == ErrorKind::Unsupported) << source;
    EXPECT_TRUE(mentions(e, "line 1")) << source << " -> " << e.what();
  }
}

TEST(JinjaRuntime, TypeErrorsAndUndefinedAttributesSayWhy) {
  EXPECT_TRUE(mentions(error_of("{{ 'a' + 1 }}"), "unsupported operand types for +: string and int"));
  EXPECT_TRUE(mentions(error_of("{{ nothing.attr }}"), "undefined"));
  EXPECT_TRUE(mentions(error_of("{{ 1 // 0 }}"), "division"));
  EXPECT_TRUE(mentions(error_of("{{ 9223372036854775807 + 1 }}"), "overflow"));
  EXPECT_TRUE(mentions(error_of("{% set x = 1 %}{% set x.y = 2 %}"), "not a namespace"));
  EXPECT_TRUE(mentions(error_of("{{ undefined_function() }}"), "undefined_function"));
}

TEST(JinjaHostile, DeepNestingIsRefusedNotAStackOverflow) {
  EXPECT_TRUE(mentions(error_of("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}"), "nested deeper"));
  EXPECT_TRUE(mentions(error_of("{{ " + std::string(50000, '[') + std::string(50000, ']') + " }}"), "nested deeper"));
  EXPECT_TRUE(mentions(error_of("{{ " + std::string(50000, '-') + "1 }}"), "nested deeper"));
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += "{% if true %}";
  EXPECT_TRUE(mentions(error_of(blocks), "nested deeper"));
  EXPECT_TRUE(mentions(error_of("{% set x = [] %}{% for i in range(1000) %}{% set ns = namespace(v=x) %}{% endfor %}"
                                "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}"),
                       "nested deeper"));
  EXPECT_TRUE(mentions(error_of("{% set ns = namespace() %}{% set ns.self = ns %}"), "namespace"));
}

// A long chain parses in a loop but builds a tree as tall as the chain,
// which evaluating it walks recursively.
TEST(JinjaHostile, LongOperatorFilterAndAttributeChainsAreRefusedNotAStackOverflow) {
  const auto chain = [](const std::string& link) {
    std::string source = "{{ 1";
    for (int i = 0; i < 50000; ++i) source += link;
    return source + " }}";
  };
  for (const char* link : {"+1", "~'a'", " and true", "|string", ".a", "[0]", "()", " is defined"}) {
    const Error e = error_of(chain(link));
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << link;
    EXPECT_TRUE(mentions(e, "operations deep")) << link << " -> " << e.what();
  }
  std::string long_but_fine = "{{ 0";
  for (int i = 0; i < 200; ++i) long_but_fine += "+1";
  const std::vector<ChatMessage> messages = {{"user", "hi"}};
  EXPECT_EQ(ChatTemplate::parse(long_but_fine + " }}").render(messages, RenderOptions{}), "200");
}

// Chains that recurse in the parser (else branches, elifs) and macros that
// stack tall expressions or call themselves from a default end in an error.
TEST(JinjaHostile, ElseChainsElifChainsAndMacroRecursionAreRefusedNotAStackOverflow) {
  std::string ternary = "{{ 1";
  for (int i = 0; i < 100000; ++i) ternary += " if false else 1";
  EXPECT_TRUE(mentions(error_of(ternary + " }}"), "nested deeper"));
  std::string elifs = "{% if false %}";
  for (int i = 0; i < 30000; ++i) elifs += "{% elif false %}";
  EXPECT_TRUE(mentions(error_of(elifs + "{% endif %}"), "nested deeper"));
  EXPECT_TRUE(mentions(error_of("{% macro f(x=f()) %}{% endmacro %}{{ f() }}"), "nested deeper"));
  std::string tall = "(f(n - 1) if n > 0 else '')";
  for (int i = 0; i < 240; ++i) tall += " ~ ''";
  EXPECT_TRUE(mentions(error_of("{% macro f(n) %}{{ " + tall + " }}{% endmacro %}{{ f(5) }}"), "nested deeper"));
}

TEST(JinjaHostile, HugeLoopsStopAtTheStepLimit) {
  EXPECT_TRUE(mentions(error_of("{% for i in range(1000000000) %}{% endfor %}"), "range()"));
  EXPECT_TRUE(mentions(error_of("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"),
                       "loop iterations"));
}

TEST(JinjaHostile, RunawayRecursionStopsAtTheCallDepth) {
  EXPECT_TRUE(mentions(error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"), "nested deeper"));
}

TEST(JinjaHostile, HugeStringsAndOutputAreRefused) {
  EXPECT_TRUE(mentions(error_of("{{ 'x' * 100000000000 }}"), "exceed"));
  EXPECT_TRUE(mentions(error_of("{% set s = 'x' * 10000000 %}{% for i in range(100) %}{{ s }}{% endfor %}"), "output exceeds"));
  EXPECT_TRUE(mentions(error_of("{% set s = 'x' * 10000000 %}{% for i in range(1000) %}{% set t = s ~ s %}{% endfor %}"),
                       "built more than"));
  EXPECT_TRUE(mentions(error_of("{{ ('x' * 1000000) | replace('', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy') }}"),
                       "too large"));
}

TEST(JinjaHostile, NulBytesAndInvalidUtf8DoNotCrash) {
  const std::string source = std::string("a\0b{{ 'c\xff' }}", 13) + "\xc3";
  const std::vector<ChatMessage> messages = {{"user", "\xff\xfe"}};
  EXPECT_EQ(ChatTemplate::parse(source).render(messages, RenderOptions{}), source.substr(0, 3) + "c\xff" "\xc3");
}

}  // namespace
}  // namespace synapse::chat
