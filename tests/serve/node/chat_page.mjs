// Loads the chat page of `synapse serve` in headless Chromium (Debian's, via
// playwright-core), sends a message and waits for the streamed answer.
// Usage: node chat_page.mjs PORT [SCREENSHOT.png]
// Exits 0 when the answer appeared and the page shows a rate, 1 otherwise.
import { chromium } from "playwright-core";

const [port, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.SYNAPSE_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.fill("#input", "Tell me a story");
  await page.click("#send");
  const answer = page.locator(".msg.assistant").first();
  await answer.waitFor();
  // Streaming: text appears before the answer is done.
  await page.waitForFunction(() => document.querySelector(".msg.assistant").textContent.length > 0,
                             null, { timeout: 60000 });
  if (screenshot) await page.screenshot({ path: screenshot });
  await page.waitForFunction(() => document.querySelector(".msg.assistant").dataset.state === "done",
                             null, { timeout: 120000 });
  const text = await answer.textContent();
  const errors = await page.locator(".msg.error").count();
  if (!text || errors) throw new Error(`no answer (text ${JSON.stringify(text)}, ${errors} errors)`);
  console.log(JSON.stringify({ chars: text.length }));
} catch (e) {
  console.error("chat page: " + e.message);
  process.exitCode = 1;
} finally {
  await browser.close();
}
