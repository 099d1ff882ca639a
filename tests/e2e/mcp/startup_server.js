// A scripted stdio MCP server for tests/mcp/startup.rs: it sends INSTRUCTIONS (when set) in its initialize result,
// and with GATE set it answers initialize only once that file exists, so a test decides exactly when it is ready.
// One tool, `ping`, answers "pong".
const fs = require('fs');
const readline = require('readline');
function send(m) { process.stdout.write(JSON.stringify(m) + '\n'); }
function whenOpen(then) {
  const gate = process.env.GATE;
  if (!gate || fs.existsSync(gate)) return then();
  setTimeout(() => whenOpen(then), 20);
}
readline.createInterface({input: process.stdin}).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    whenOpen(() => {
      const result = {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}},
        serverInfo: {name: 'startup-fixture', version: '1.0.0'}};
      if (process.env.INSTRUCTIONS) result.instructions = process.env.INSTRUCTIONS;
      send({jsonrpc: '2.0', id: m.id, result});
    });
  } else if (m.method === 'tools/list') {
    send({jsonrpc: '2.0', id: m.id, result: {tools: [{name: 'ping', description: 'Answers pong',
      inputSchema: {type: 'object'}}]}});
  } else if (m.method === 'tools/call') {
    send({jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: 'pong'}]}});
  } else if (m.id !== undefined) {
    send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no method ' + m.method}});
  }
});
