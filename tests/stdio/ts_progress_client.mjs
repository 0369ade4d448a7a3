// The TypeScript SDK's client over stdio: `rounds` times, calls `count` `parallel` times at
// once with a progress handler each, and prints one JSON line per call with the progress
// values it received. <sdk dir> is @modelcontextprotocol/sdk (1.x) or
// @modelcontextprotocol/client (2.x). Usage:
//   node ts_progress_client.mjs <sdk dir> <steps> <rounds> <parallel> <command> [args...]
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, steps, rounds, parallel, command, ...args] = process.argv.slice(2);
const load = (sub) => import(pathToFileURL(path.join(sdkDir, "dist", sub)).href);
const v2 = JSON.parse(readFileSync(path.join(sdkDir, "package.json"))).name.endsWith("/client");
const { Client } = await load(v2 ? "index.mjs" : "esm/client/index.js");
const { StdioClientTransport } = await load(v2 ? "stdio.mjs" : "esm/client/stdio.js");

const client = new Client({ name: "ts-progress", version: "0.0.0" });
client.onerror = (error) => console.error(`client error: ${error.message}`);
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
for (let round = 0; round < Number(rounds); round++) {
  const calls = Array.from({ length: Number(parallel) }, async (_, call) => {
    const seen = [];
    const params = { name: "count", arguments: { steps: Number(steps) } };
    const options = { onprogress: (p) => seen.push(p.progress) };
    const result = await (v2
      ? client.callTool(params, options)
      : client.callTool(params, undefined, options));
    return { round, call, seen, text: result.content[0].text };
  });
  for (const line of await Promise.all(calls)) console.log(JSON.stringify(line));
}
await client.close();
