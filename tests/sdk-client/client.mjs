// The official TypeScript MCP SDK client, driven by the Rust tests:
//
//   MCP_BEARER_TOKEN=... MCP_STEPS='[{"list":true},{"call":"billing","arguments":{...}}]' \
//     node tests/sdk-client/client.mjs http://127.0.0.1:PORT/mcp
//
// Connects over streamable HTTP (with `Authorization: Bearer <token>` when MCP_BEARER_TOKEN is
// set), runs each step in order and prints one JSON line per step on stdout:
//   {"step":i,"ok":true,"tools":[names]}   a `{"list":true}` step (tools/list)
//   {"step":i,"ok":true,"result":{...}}    a `{"call":name,"arguments":{...}}` step (tools/call)
//   {"step":i,"ok":false,"error":"...","code":n}  a step that threw (code when the error has one)
// A failed connect prints {"step":"connect","ok":false,...} and exits 2; otherwise exits 0.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.argv[2];
if (!url) {
  console.error("usage: node client.mjs <url>  (env MCP_STEPS, MCP_BEARER_TOKEN)");
  process.exit(64);
}
const token = process.env.MCP_BEARER_TOKEN;
const steps = JSON.parse(process.env.MCP_STEPS ?? "[]");

const print = (line) => console.log(JSON.stringify(line));
const failure = (step, e) => ({
  step,
  ok: false,
  error: e?.message ?? String(e),
  ...(typeof e?.code === "number" ? { code: e.code } : {}),
});

const client = new Client({ name: "mcp-fusion-sdk-client", version: "0.0.0" });
const transport = new StreamableHTTPClientTransport(
  new URL(url),
  token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined,
);
try {
  await client.connect(transport);
} catch (e) {
  print(failure("connect", e));
  await client.close().catch(() => {});
  process.exit(2);
}

for (const [i, step] of steps.entries()) {
  try {
    if (step.list) {
      const { tools } = await client.listTools();
      print({ step: i, ok: true, tools: tools.map((t) => t.name) });
    } else {
      const result = await client.callTool({ name: step.call, arguments: step.arguments ?? {} });
      print({ step: i, ok: true, result });
    }
  } catch (e) {
    print(failure(i, e));
  }
}
await client.close();
