// Renders every tests/data/chat_templates/<family>.jinja over every
// conversation in conversations.json with @huggingface/jinja (the engine
// transformers.js uses; trim_blocks and lstrip_blocks on, as in transformers)
// and writes goldens.json next to them. A render that raises is recorded
// with its message under "error" instead of "expected".
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Environment, Template } from "@huggingface/jinja";

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = join(here, "..", "..", "tests", "data", "chat_templates");
const spec = JSON.parse(readFileSync(join(dataDir, "conversations.json"), "utf8"));

// strftime_now() at spec.fixed_date (UTC midnight) so goldens do not depend
// on the day they were generated. Only the fields chat templates use.
const MONTHS = ["January", "February", "March", "April", "May", "June", "July",
                "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
function strftimeFixed(format) {
  const date = new Date(spec.fixed_date + "T00:00:00Z");
  const pad2 = (n) => String(n).padStart(2, "0");
  return format.replace(/%[YymdbBaAHMS%]/g, (token) => ({
    "%Y": String(date.getUTCFullYear()),
    "%y": pad2(date.getUTCFullYear() % 100),
    "%m": pad2(date.getUTCMonth() + 1),
    "%d": pad2(date.getUTCDate()),
    "%b": MONTHS[date.getUTCMonth()].slice(0, 3),
    "%B": MONTHS[date.getUTCMonth()],
    "%a": DAYS[date.getUTCDay()].slice(0, 3),
    "%A": DAYS[date.getUTCDay()],
    "%H": "00", "%M": "00", "%S": "00", "%%": "%",
  })[token]);
}

// Template.render() declares the library's own strftime_now (the real clock)
// and refuses a second declaration, so swap ours in where it is declared.
const declare = Environment.prototype.set;
Environment.prototype.set = function (name, value) {
  return declare.call(this, name, name === "strftime_now" ? strftimeFixed : value);
};

const families = readdirSync(dataDir).filter((f) => f.endsWith(".jinja"))
  .map((f) => f.slice(0, -".jinja".length)).sort();
const cases = [];
for (const family of families) {
  const tokens = spec.families[family];
  if (!tokens) throw new Error(`conversations.json has no tokens for family ${family}`);
  const template = new Template(readFileSync(join(dataDir, `${family}.jinja`), "utf8"));
  for (const [conversation, messages] of Object.entries(spec.conversations)) {
    for (const addGenerationPrompt of [true, false]) {
      const entry = { family, conversation, add_generation_prompt: addGenerationPrompt };
      try {
        entry.expected = template.render({
          messages, add_generation_prompt: addGenerationPrompt,
          bos_token: tokens.bos_token, eos_token: tokens.eos_token,
        });
      } catch (error) {
        entry.error = error.message;
      }
      cases.push(entry);
    }
  }
}
writeFileSync(join(dataDir, "goldens.json"), JSON.stringify({
  generator: "scripts/chat_goldens/generate.mjs with @huggingface/jinja 0.5.11",
  cases,
}, null, 1) + "\n");
console.log(`wrote ${cases.length} cases for ${families.length} families`);
