// A scripted stdio MCP server for tests/mcp/hostile.rs: tools whose names collide or run long after sanitising,
// schemas with `$ref`, `anyOf` and no `type`, a tool list that grows (`add_tool`), a tool that never answers (`slow`),
// an `isError` result (`fail`), counters (`stats`), and with FLOOD=1 an endless stream of notifications written as
// fast as the client reads them.
const readline = require('readline');
const flood = process.env.FLOOD === '1';
let lists = 0, calls = 0, extra = false, noise = 0;
const cancelled = [];
const long = 'x'.repeat(70);
function tools() {
  const t = [
    {name: 'a.b', inputSchema: {type: 'object'}},
    {name: 'a_b', inputSchema: {type: 'object'}},
    {name: 'a b', inputSchema: {type: 'object'}},
    {name: long + '_one', inputSchema: {type: 'object'}},
    {name: long + '_two', inputSchema: {type: 'object'}},
    {name: 'refs', description: 'Uses $ref and anyOf', inputSchema: {type: 'object',
      properties: {p: {$ref: '#/$defs/P'}}, required: ['p'], $defs: {P: {anyOf: [{type: 'integer'}, {type: 'null'}]}}}},
    {name: 'untyped', inputSchema: {properties: {n: {type: 'integer'}}}},
    {name: 'not_an_object', inputSchema: {type: 'string'}},
    {name: 'add_tool', inputSchema: {type: 'object'}},
    {name: 'stats', inputSchema: {type: 'object'}},
    {name: 'fail', inputSchema: {type: 'object'}},
    {name: 'slow', inputSchema: {type: 'object'}},
  ];
  if (extra) t.push({name: 'extra', inputSchema: {type: 'object'}});
  return t;
}
function send(m) { return process.stdout.write(JSON.stringify(m) + '\n'); }
function text(id, s, isError) { send({jsonrpc: '2.0', id, result: {content: [{type: 'text', text: s}], isError}}); }
let i = 0;
function pump() {
  let ok = true;
  while (ok) {
    i++;
    noise += 3;
    ok = send({jsonrpc: '2.0', method: 'notifications/message', params: {level: 'info', data: 'noise ' + i + ' '.repeat(200)}})
      && send({jsonrpc: '2.0', method: 'notifications/tools/list_changed'})
      && send({jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken: 'nobody', progress: i}});
  }
  process.stdout.once('drain', () => setImmediate(pump));
}
readline.createInterface({input: process.stdin}).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: m.params.protocolVersion,
      capabilities: {tools: {listChanged: true}, logging: {}}, serverInfo: {name: 'fixture', version: '1.0.0'}}});
  } else if (m.method === 'notifications/cancelled') {
    cancelled.push(m.params.reason);
  } else if (m.method === 'notifications/initialized') {
    if (flood) setImmediate(pump);
  } else if (m.method === 'tools/list') {
    lists++;
    send({jsonrpc: '2.0', id: m.id, result: {tools: tools()}});
  } else if (m.method === 'tools/call') {
    calls++;
    const name = m.params.name;
    if (name === 'stats') text(m.id, JSON.stringify({lists, calls, noise, cancelled}));
    else if (name === 'slow') {}
    else if (name === 'fail') text(m.id, 'it broke', true);
    else if (name === 'add_tool') {
      extra = true;
      text(m.id, 'added');
      send({jsonrpc: '2.0', method: 'notifications/tools/list_changed'});
    } else text(m.id, 'called ' + name + ' with ' + JSON.stringify(m.params.arguments || {}));
  } else if (m.id !== undefined) {
    send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no method ' + m.method}});
  }
});
