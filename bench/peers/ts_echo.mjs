// The official TypeScript SDK's server (@modelcontextprotocol/sdk, Streamable HTTP, stateful
// sessions as its documentation shows them) with the benchmark tools.
//
//   node ts_echo.mjs PORT [json]     (installed by bench/run.py into bench/.node-sdk)
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const port = Number(process.argv[2] || 8000);
const jsonResponse = process.argv[3] === "json";
const extraTools = Number(process.env.CODEX_MCP_BENCH_TOOLS || 0);

function build() {
  const server = new McpServer({ name: "ts-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the message back.", inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  server.registerTool(
    "blob",
    { description: "Return `size` bytes of text.", inputSchema: { size: z.number().int() } },
    async ({ size }) => ({ content: [{ type: "text", text: "x".repeat(size) }] }),
  );
  for (let index = 0; index < extraTools; index++) {
    server.registerTool(
      `tool_${String(index).padStart(4, "0")}`,
      { description: `Benchmark tool ${index}`, inputSchema: { message: z.string() } },
      async ({ message }) => ({ content: [{ type: "text", text: message }] }),
    );
  }
  return server;
}

const transports = new Map();

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
}

createServer(async (req, res) => {
  if (!req.url.startsWith("/mcp")) {
    res.writeHead(404).end();
    return;
  }
  const sessionId = req.headers["mcp-session-id"];
  const body = req.method === "POST" ? await readJson(req) : undefined;
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport && req.method === "POST" && !sessionId && isInitializeRequest(body)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: jsonResponse,
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transports.delete(transport.sessionId);
    await build().connect(transport);
  }
  if (!transport) {
    res.writeHead(sessionId ? 404 : 400, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session" } }));
    return;
  }
  await transport.handleRequest(req, res, body);
}).listen(port, "127.0.0.1");
