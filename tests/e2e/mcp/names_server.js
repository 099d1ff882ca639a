// A scripted stdio MCP server for the rule, name and size tests (tests/escape/mcp.rs): it offers the tools named on
// its command line and answers each call with "LABEL called TOOL". A tool named `huge` answers with a text of
// HUGE_MB megabytes (17 unless set), one JSON-RPC line past the client's 16 MB limit; the reply's id comes last, as
// the TypeScript SDK writes it.
// Usage: node names_server.js LABEL TOOL...
const readline = require('readline');
const [label, ...names] = process.argv.slice(2);
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');

readline.createInterface({input: process.stdin}).on('line', (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    return;
  }
  const {method, id, params} = req;
  if (method === 'initialize') {
    send({jsonrpc: '2.0', id, result: {
      protocolVersion: (params && params.protocolVersion) || '2025-06-18',
      capabilities: {tools: {}},
      serverInfo: {name: label, version: '1.0'},
    }});
  } else if (method === 'tools/list') {
    send({jsonrpc: '2.0', id, result: {tools: names.map((name) => ({
      name, description: `Tool ${name} of ${label}.`, inputSchema: {type: 'object', properties: {}},
    }))}});
  } else if (method === 'tools/call') {
    const tool = params.name;
    if (tool === 'huge') {
      const mb = Number(process.env.HUGE_MB || '17');
      const text = 'x'.repeat(mb * 1024 * 1024);
      process.stdout.write(JSON.stringify({result: {content: [{type: 'text', text}]}, jsonrpc: '2.0', id}) + '\n');
    } else {
      send({jsonrpc: '2.0', id, result: {content: [{type: 'text', text: `${label} called ${tool}`}]}});
    }
  } else if (id !== undefined) {
    send({jsonrpc: '2.0', id, result: {}});
  }
});
