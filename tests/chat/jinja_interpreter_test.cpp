// The Jinja subset chat templates use, construct by construct. Expected
// strings are what Python Jinja2 (as transformers configures it) renders.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "synapse/error.h"

namespace synapse::chat {
namespace {

std::string render(std::string_view source, std::vector<ChatMessage> messages = {}) {
  RenderOptions options;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  options.fixed_date = "2024-07-26";
  return ChatTemplate::parse(source).render(messages, options);
}

TEST(JinjaOutput, PrintsLiteralsAsPythonStrDoes) {
  EXPECT_EQ(render("{{ 1 }} {{ 1.5 }} {{ 2.0 }} {{ true }} {{ none }} {{ 'a' }} {{ undefined_name }}"),
            "1 1.5 2.0 True None a ");
  EXPECT_EQ(render("{{ [1, 'a', none, [true]] }}"), "[1, 'a', None, [True]]");
  EXPECT_EQ(render("{{ {'k': \"it's\"} }}"), "{'k': \"it's\"}");
}

TEST(JinjaWhitespace, TrimBlocksAndLstripBlocksAsTransformersSetsThem) {
  EXPECT_EQ(render("{% if true %}\n  yes\n{% endif %}\nafter\n"), "  yes\nafter");
  EXPECT_EQ(render("a\n    {% if true %}b{% endif %}"), "a\nb");
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(render("a {{- 'x' -}} b"), "axb");
  EXPECT_EQ(render("a {#- comment -#} b{# c #}\nd"), "abd");
}

TEST(JinjaStatements, ForLoopExposesLoopVariables) {
  EXPECT_EQ(render("{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                   "{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}"),
            "103TrueFalse3;212FalseFalse3;321FalseTrue3;");
}

TEST(JinjaStatements, ForLoopFilterElseBreakContinueAndUnpacking) {
  EXPECT_EQ(render("{% for x in range(10) if x % 2 %}{{ x }}{{ loop.length }},{% endfor %}"), "15,35,55,75,95,");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in range(9) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}"
                   "{{ x }}{% endfor %}"),
            "013");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }} {% endfor %}"), "a=1 b=2 ");
  EXPECT_EQ(render("{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}"), "ab");
}

TEST(JinjaStatements, IfElifElse) {
  const char* source = "{% for n in [1, 2, 3] %}{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %} {% endfor %}";
  EXPECT_EQ(render(source), "one two many ");
}

TEST(JinjaStatements, SetInsideLoopDoesNotLeakButNamespaceDoes) {
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}"),
            "4");
  EXPECT_EQ(render("{% if true %}{% set x = 'seen' %}{% endif %}{{ x }}"), "seen");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}in {{ 'block' }}{% endset %}[{{ block }}]"), "[in block]");
}

TEST(JinjaStatements, MacrosTakePositionalKeywordAndDefaultArguments) {
  EXPECT_EQ(render("{% macro tag(name, open='<', close='>') %}{{ open }}{{ name }}{{ close }}{% endmacro %}"
                   "{{ tag('a') }}{{ tag('b', close=']') }}{{ tag('c', '(', ')') }}"),
            "<a><b](c)");
}

TEST(JinjaExpressions, ArithmeticFollowsPython) {
  EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }}"),
            "3 -4 2 3.5 1024 7 9");
  EXPECT_EQ(render("{{ 'ab' * 3 }} {{ [1] + [2] }} {{ 'x' ~ 1 ~ none }}"), "ababab [1, 2] x1None");
}

TEST(JinjaExpressions, ComparisonsLogicAndMembership) {
  EXPECT_EQ(render("{{ 1 < 2 }} {{ 'a' == 'a' }} {{ 1 == 1.0 }} {{ [1] != [1] }} {{ 'b' in 'abc' }} {{ 3 not in [1, 2] }}"),
            "True True True False True True");
  EXPECT_EQ(render("{{ none or 'x' }} {{ 0 and 1 }} {{ not '' }} {{ 'y' if false else 'n' }} {{ 'k' in {'k': 1} }}"),
            "x 0 True n True");
}

TEST(JinjaExpressions, SubscriptsSlicesAndAttributes) {
  EXPECT_EQ(render("{{ [1, 2, 3][-1] }} {{ [1, 2, 3][::-1] }} {{ [1, 2, 3, 4][1:3] }} {{ 'héllo'[1] }} {{ 'héllo'[::-1] }}"),
            "3 [3, 2, 1] [2, 3] é olléh");
  EXPECT_EQ(render("{{ messages[0].role }} {{ messages[0]['content'] }} {{ messages[1:] | length }}",
                   {{"user", "hi"}, {"assistant", "yo"}}),
            "user hi 1");
  EXPECT_EQ(render("{{ messages[0].missing is defined }} {{ [1][5] is defined }}", {{"user", "hi"}}), "False False");
}

TEST(JinjaFilters, StringFilters) {
  EXPECT_EQ(render("[{{ '  a b \n' | trim }}] {{ 'aBc' | upper }} {{ 'aBc' | lower }} {{ 'hello big-world' | title }} "
                   "{{ 'hELLO' | capitalize }} {{ 'a-a' | replace('-', '+') }} {{ 'héllo' | length }}"),
            "[a b] ABC abc Hello Big-World Hello a+a 5");
}

TEST(JinjaFilters, SequenceFilters) {
  EXPECT_EQ(render("{{ [3, 1, 2] | first }} {{ [3, 1, 2] | last }} {{ [3, 1, 2] | join(', ') }} {{ [3, 1, 2] | sort }} "
                   "{{ 'ab' | list }} {% for k, v in {'a': 1} | items %}{{ k }}{{ v }}{% endfor %} {{ [1, 1, 2] | unique | list }} {{ [1, 2] | reverse | list }}"),
            "3 2 3, 1, 2 [1, 2, 3] ['a', 'b'] a1 [1, 2] [2, 1]");
  EXPECT_EQ(render("{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join('|') }} "
                   "{{ messages | rejectattr('role', 'eq', 'user') | list | length }}",
                   {{"user", "a"}, {"assistant", "b"}, {"user", "c"}}),
            "a|c 1");
}

TEST(JinjaFilters, ValueFilters) {
  EXPECT_EQ(render("{{ undefined_name | default('d') }} {{ '' | default('d', true) }} {{ '42' | int + 1 }} {{ 'x' | int }} "
                   "{{ 3 | string ~ '!' }} {{ -2 | abs }}"),
            "d d 43 0 3! 2");
}

TEST(JinjaFilters, TojsonMatchesTransformersJsonDumps) {
  EXPECT_EQ(render("{{ {'name': 'f', 'args': [1, 2.5, true, none], 'ü': 'é\"\\n'} | tojson }}"),
            R"({"name": "f", "args": [1, 2.5, true, null], "ü": "é\"\n"})");
  EXPECT_EQ(render("{{ {'a': [1, {}], 'b': []} | tojson(indent=2) }}"), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}"), R"({"a": 2, "b": 1})");
}

TEST(JinjaMethods, StringMethods) {
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} [{{ '\n x \n'.strip() }}] "
                   "[{{ 'xxaxx'.lstrip('x') }}] [{{ 'xxaxx'.rstrip('x') }}] {{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} "
                   "{{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.upper() }} {{ 'hello world'.title() }}"),
            "True True [x] [axx] [xxa] ['a', 'b', '', 'c'] ['a', 'b'] bba AB Hello World");
  EXPECT_EQ(render("{{ messages[0].content.split('</think>')[-1].lstrip('\\n') }}", {{"assistant", "<think>r</think>\n\nok"}}),
            "ok");
}

TEST(JinjaMethods, DictMethods) {
  EXPECT_EQ(render("{% set d = {'a': 1} %}{{ d.get('a') }} {{ d.get('b') }} {{ d.get('b', 2) }} {{ d.keys() | list }} "
                   "{{ d.values() | list }} {% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}"),
            "1 None 2 ['a'] [1] a1");
}

TEST(JinjaTests, IsTests) {
  EXPECT_EQ(render("{{ x is defined }} {{ none is none }} {{ 'a' is string }} {{ {} is mapping }} {{ [] is iterable }} "
                   "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 1 is not none }} {{ false is false }} "
                   "{{ 1 is number }} {{ 'a' is in 'abc' }}"),
            "False True True True True True True True True True True True");
}

TEST(JinjaGlobals, RangeNamespaceAndStrftimeNowAtTheFixedDate) {
  EXPECT_EQ(render("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}"),
            "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y') }} {{ strftime_now('%A %B %m/%d/%y') }}"),
            "26 Jul 2024 Friday July 07/26/24");
}

TEST(JinjaGlobals, RaiseExceptionThrowsWithTheTemplatesMessage) {
  try {
    render("{{ raise_exception('roles must alternate') }}");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("roles must alternate"), std::string::npos);
  }
}

TEST(JinjaStrings, EscapesInLiteralsFollowPython) {
  EXPECT_EQ(render(R"({{ 'a\nb\t\'\"\\\u00e9\x41' }})"), "a\nb\t'\"\\\xc3\xa9" "A");
  EXPECT_EQ(render(R"({{ 'a' "b" }})"), "ab");
}

TEST(JinjaGeneration, GenerationBlockRendersItsBody) {
  EXPECT_EQ(render("a{% generation %}b{% endgeneration %}c"), "abc");
}

}  // namespace
}  // namespace synapse::chat
