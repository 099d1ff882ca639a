// A tiny stdio MCP server for the fault suite: newline-delimited JSON-RPC on stdin/stdout. It answers initialize and
// tools/list and writes its pid to a file; on tools/call it either exits at once ("crash") or starts a child in its
// process group and waits on it ("hang"), until something ends the group.
// Usage: node mcp_server.js crash|hang PIDDIR
const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const [mode, piddir] = process.argv.slice(2);
fs.writeFileSync(path.join(piddir, "server.pid"), String(process.pid));
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    return;
  }
  const { method, id } = req;
  if (method === "initialize") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: (req.params && req.params.protocolVersion) || "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "faulty", version: "1.0" },
      },
    });
  } else if (method === "tools/list") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        tools: [{ name: "work", description: "Does some work.", inputSchema: { type: "object", properties: {} } }],
      },
    });
  } else if (method === "tools/call") {
    if (mode === "crash") {
      process.stderr.write("faulty: crashing on purpose\n");
      process.exit(3);
    }
    const child = spawn("sleep", ["33"], { stdio: "ignore" });
    fs.writeFileSync(path.join(piddir, "child.pid"), String(child.pid));
  } else if (id !== undefined) {
    send({ jsonrpc: "2.0", id, result: {} });
  }
});
