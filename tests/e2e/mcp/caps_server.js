// A scripted stdio MCP server for tests/mcp/caps.rs: a tool whose schema providers reject (`bad_schema`: a top-level
// anyOf and an array without items), results with text and structuredContent (`weather`, `read`), text and binary
// blobs (`blobs`), a task-only tool (`research`), and tools that ask the client back: `ask` (elicitation/create),
// `roots` (roots/list), `caps` (the capabilities the client declared).
const readline = require('readline');
let capabilities = null, next = 1000;
const waiting = new Map();
const b64 = (s) => Buffer.from(s).toString('base64');
const tools = [
  {name: 'bad_schema', description: 'A schema OpenAI rejects', inputSchema: {anyOf: [
    {type: 'object', properties: {path: {type: 'string'}, tags: {type: 'array'}}, required: ['path']},
    {type: 'object', properties: {url: {type: 'string'}}, required: ['url']}]}},
  {name: 'weather', inputSchema: {type: 'object'}},
  {name: 'read', inputSchema: {type: 'object'}},
  {name: 'blobs', inputSchema: {type: 'object'}},
  {name: 'research', inputSchema: {type: 'object'}, execution: {taskSupport: 'required'}},
  {name: 'ask', inputSchema: {type: 'object'}},
  {name: 'roots', inputSchema: {type: 'object'}},
  {name: 'caps', inputSchema: {type: 'object'}},
];
const file = 'line of the file\n'.repeat(200);
function send(m) { process.stdout.write(JSON.stringify(m) + '\n'); }
function result(id, r) { send({jsonrpc: '2.0', id, result: r}); }
function text(id, s) { result(id, {content: [{type: 'text', text: s}]}); }
function request(method, params, then) {
  const id = next++;
  waiting.set(id, then);
  send({jsonrpc: '2.0', id, method, params});
}
readline.createInterface({input: process.stdin}).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === undefined && m.id !== undefined && waiting.has(m.id)) {
    const then = waiting.get(m.id);
    waiting.delete(m.id);
    then(m.result !== undefined ? m.result : {error: m.error});
  } else if (m.method === 'initialize') {
    capabilities = m.params.capabilities;
    result(m.id, {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}},
      serverInfo: {name: 'caps-fixture', version: '1.0.0'}});
  } else if (m.method === 'tools/list') {
    result(m.id, {tools});
  } else if (m.method === 'tools/call') {
    const name = m.params.name;
    if (name === 'weather') {
      const w = {temperature: 21, conditions: 'Sunny'};
      result(m.id, {content: [{type: 'text', text: JSON.stringify(w)}], structuredContent: w});
    } else if (name === 'read') {
      result(m.id, {content: [{type: 'text', text: file}], structuredContent: {content: file}});
    } else if (name === 'blobs') {
      result(m.id, {content: [
        {type: 'resource', resource: {uri: 'fx://notes.txt', mimeType: 'text/plain', blob: b64('hello from a blob')}},
        {type: 'resource', resource: {uri: 'fx://notes.gz', mimeType: 'application/gzip',
          blob: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4]).toString('base64')}}]});
    } else if (name === 'ask') {
      request('elicitation/create', {mode: 'form', message: 'Who are you?', requestedSchema: {type: 'object',
        properties: {name: {type: 'string', title: 'Name'}, ok: {type: 'boolean', title: 'Agree'}}, required: ['name']}},
        (r) => text(m.id, 'answer: ' + JSON.stringify(r)));
    } else if (name === 'roots') {
      request('roots/list', {}, (r) => text(m.id, JSON.stringify(r)));
    } else if (name === 'caps') {
      text(m.id, JSON.stringify(capabilities));
    } else {
      send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'Tool ' + name + ' requires task augmentation'}});
    }
  } else if (m.id !== undefined && m.method !== undefined) {
    send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no method ' + m.method}});
  }
});
