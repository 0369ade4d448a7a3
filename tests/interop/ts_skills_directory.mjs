// The TypeScript SDK 2.x client's SkillsClient against a server over stdio, in one revision:
// lists the skills, reads the first skill's directory, and prints one JSON line with what it
// got (or the error it raised). Usage:
//   node ts_skills_directory.mjs <client package dir> <legacy|2026-07-28> <command> [args...]
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, revision, command, ...args] = process.argv.slice(2);
const load = (sub) => import(pathToFileURL(path.join(sdkDir, "dist", sub)).href);
const { Client } = await load("index.mjs");
const { StdioClientTransport } = await load("stdio.mjs");
const { SkillsClient } = await load("ext/skills/index.mjs");

const options =
  revision === "legacy" ? {} : { versionNegotiation: { mode: { pin: revision } } };
const client = new Client({ name: "ts-skills", version: "0.0.0" }, options);
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const skills = new SkillsClient(client);
const out = {};
try {
  const { skills: entries } = await skills.list();
  const root = entries[0].uri.replace(/\/SKILL\.md$/, "");
  const read = await skills.readDirectory(root);
  out.resources = read.resources.map((r) => r.uri);
  out.ttlMs = read.ttlMs ?? null;
  out.cacheScope = read.cacheScope ?? null;
} catch (error) {
  out.error = String(error?.message ?? error);
}
console.log(JSON.stringify(out));
await client.close();
