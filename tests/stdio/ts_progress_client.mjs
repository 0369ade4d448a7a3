// The TypeScript SDK's client over stdio: `rounds` times, calls `count` `parallel` times at
// once with a progress handler each, and prints one JSON line per call with the progress
// values it received. Usage:
//   node ts_progress_client.mjs <sdk dir> <steps> <rounds> <parallel> <command> [args...]
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, steps, rounds, parallel, command, ...args] = process.argv.slice(2);
const load = (sub) => import(pathToFileURL(path.join(sdkDir, "dist/esm", sub)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const client = new Client({ name: "ts-progress", version: "0.0.0" });
client.onerror = (error) => console.error(`client error: ${error.message}`);
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
for (let round = 0; round < Number(rounds); round++) {
  const calls = Array.from({ length: Number(parallel) }, async (_, call) => {
    const seen = [];
    const result = await client.callTool(
      { name: "count", arguments: { steps: Number(steps) } },
      undefined,
      { onprogress: (p) => seen.push(p.progress) },
    );
    return { round, call, seen, text: result.content[0].text };
  });
  for (const line of await Promise.all(calls)) console.log(JSON.stringify(line));
}
await client.close();
