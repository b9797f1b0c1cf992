// The official TypeScript MCP SDK 2 client listening to a resource, driven by the Rust tests:
//
//   node tests/sdk2-client/listen.mjs http://127.0.0.1:PORT/mcp ERA [URI]
//
// ERA is `2026-07-28` (the client pins that revision: `server/discover`, then a
// `subscriptions/listen` stream for URI) or `2025-11-25` (the `initialize` handshake of a session,
// then `resources/subscribe` to URI). URI defaults to `test://watched-resource`. It waits for two
// `notifications/resources/updated` of URI dispatched to the SDK's own handler, within 20 s, and
// prints one JSON line per event on stdout:
//   {"http":{"method":"POST","mcpMethod":...,"protocolVersion":...,"mcpName":...,"status":n}}
//                                  each HTTP request the transport made (its MCP headers)
//   {"sent":{...}}                 each JSON-RPC message the client sent
//   {"received":{...}}             each JSON-RPC message the transport handed the client
//   {"connected":{"era":...,"protocolVersion":...,"server":{...}}}
//   {"listening":{"honoredFilter":{...}}}   (2026-07-28) the acknowledged filter
//   {"subscribed":true}                     (2025-11-25) resources/subscribe answered
//   {"updated":{"uri":...}}        each update the SDK's notification handler received
//   {"done":{"updates":2,"closed":...}}
// A failure prints {"error":"...","code":n} and exits 2 (1 for bad arguments).
//
// Closing the 2026-07-28 subscription aborts the listen request's stream (the cancellation that
// revision defines for HTTP) and also POSTs `notifications/cancelled`, which this SDK sends
// without `Mcp-Method` (it stamps the standard headers on requests only): rmcp's server answers
// that POST 400 (-32020), which that revision permits for a notification; the stream's end
// has already ended the subscription.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, era, uri = "test://watched-resource"] = process.argv.slice(2);
if (!url || !["2026-07-28", "2025-11-25"].includes(era)) {
  console.error("usage: node listen.mjs <url> <2026-07-28|2025-11-25> [uri]");
  process.exit(1);
}
const UPDATES = 2;
const BOUND_MS = 20_000;

const print = (line) => console.log(JSON.stringify(line));
const fail = (e) => {
  print({ error: e?.message ?? String(e), ...(typeof e?.code === "number" ? { code: e.code } : {}) });
  process.exit(2);
};
const bound = setTimeout(
  () => fail(new Error(`fewer than ${UPDATES} updates of ${uri} within ${BOUND_MS / 1000} s`)),
  BOUND_MS,
);

// What the transport puts on the wire: each request's MCP headers and its answer's status.
const observed = async (input, init) => {
  const headers = new Headers(init?.headers);
  const response = await fetch(input, init);
  print({
    http: {
      method: init?.method ?? "GET",
      mcpMethod: headers.get("mcp-method"),
      mcpName: headers.get("mcp-name"),
      protocolVersion: headers.get("mcp-protocol-version"),
      status: response.status,
    },
  });
  return response;
};

const client = new Client(
  { name: "mcp-fusion-sdk2-client", version: "0.0.0" },
  era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {},
);
let updates = 0;
let finished;
const done = new Promise((resolve) => (finished = resolve));
client.setNotificationHandler("notifications/resources/updated", (notification) => {
  if (notification.params.uri !== uri) return;
  print({ updated: { uri: notification.params.uri } });
  if (++updates === UPDATES) finished();
});

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: observed });
try {
  await client.connect(transport);
} catch (e) {
  fail(e);
}
// Tap the transport both ways once the client has taken it: the raw messages, `_meta` and all
// (the SDK lifts the reserved `io.modelcontextprotocol/*` keys out before its handlers).
const send = transport.send.bind(transport);
transport.send = (message, options) => {
  print({ sent: message });
  return send(message, options);
};
const onmessage = transport.onmessage;
transport.onmessage = (message, extra) => {
  print({ received: message });
  onmessage?.(message, extra);
};
print({
  connected: {
    era: client.getProtocolEra(),
    protocolVersion: client.getNegotiatedProtocolVersion(),
    server: client.getServerVersion(),
  },
});

let closed;
try {
  if (era === "2026-07-28") {
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    print({ listening: { honoredFilter: subscription.honoredFilter } });
    await done;
    await subscription.close();
    closed = await subscription.closed;
  } else {
    await client.subscribeResource({ uri });
    print({ subscribed: true });
    await done;
    await client.unsubscribeResource({ uri });
  }
} catch (e) {
  fail(e);
}
clearTimeout(bound);
await client.close();
print({ done: { updates, ...(closed ? { closed } : {}) } });
process.exit(0);
