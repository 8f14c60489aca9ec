// Drives `synapse serve` with the official OpenAI client: a chat completion,
// a streamed one and a text completion. Usage: node openai_client.mjs PORT
// Exits 0 when every answer has OpenAI's shape, 1 naming what was wrong.
import OpenAI from "openai";

const port = process.argv[2];
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused", maxRetries: 0 });
const fail = (why) => { console.error("openai client: " + why); process.exit(1); };
const messages = [{ role: "user", content: "Say hello" }];

const chat = await client.chat.completions.create({ model: "any", messages, max_tokens: 8, temperature: 0 });
if (chat.object !== "chat.completion") fail("chat object is " + chat.object);
if (typeof chat.choices[0].message.content !== "string") fail("chat has no content");
if (chat.usage.completion_tokens < 1) fail("chat usage counts no tokens");

const stream = await client.chat.completions.create({
  model: "any", messages, max_tokens: 8, temperature: 0, stream: true,
});
let streamed = "", finish = null;
for await (const chunk of stream) {
  const choice = chunk.choices[0];
  if (!choice) continue;
  streamed += choice.delta?.content ?? "";
  finish = choice.finish_reason ?? finish;
}
if (streamed !== chat.choices[0].message.content) fail("the stream's text differs from the greedy answer");
if (finish !== chat.choices[0].finish_reason) fail("the stream finished with " + finish);

const text = await client.completions.create({ model: "any", prompt: "Once upon a time", max_tokens: 5, temperature: 0 });
if (text.object !== "text_completion" || typeof text.choices[0].text !== "string") fail("bad text completion");

const models = await client.models.list();
if (!models.data.length) fail("no model listed");
console.log(JSON.stringify({ chat: chat.choices[0].message.content, finish, models: models.data.map((m) => m.id) }));
