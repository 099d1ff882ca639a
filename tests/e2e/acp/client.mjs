// A real ACP client (the protocol's TypeScript SDK, @agentclientprotocol/sdk, installed by .ci/install-acp) that
// starts `tern acp` and drives it through a plan, then prints what it saw as one JSON object on stdout for
// tests/e2e/acp.rs to check. The SDK validates every message tern sends against the protocol's schema.
//
// The plan (JSON, argv[2]):
//   command: [program, ...args]   how to start tern acp; env: its environment; cwd: the session's directory
//   load: "ID"                    load this session instead of making a new one
//   mcpServers: [...]             the MCP servers the editor gives the session
//   fs: {path: text}              the editor's unsaved buffers: offered as fs.readTextFile, and writes land here
//   fsWrites: false               offer fs.readTextFile only, not fs.writeTextFile (offered with fs by default)
//   refuseWrites: "reason"        answer every fs/write_text_file with this error
//   swapOnRead: "PATH"            read files without a buffer from disk, as editors do, while a racing command has
//                                 swapped a symlink to PATH in on the file (and back before the answer)
//   answers: ["allow_once", ...]  the options chosen for tern's permission requests, in order
//   steps: [{prompt: "text", cancelOnChunk?: true, cancelOnPermission?: true} | {setMode: "ask"}]
// The result: {initialize, sessionId, modes, loaded: [updates], turns: [{updates, permissions, stopReason | error}],
// reads: [paths], writes: {path: text}, stderr}.

import { spawn } from "node:child_process";
import * as nodeFs from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const plan = JSON.parse(process.argv[2]);
const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
const { client, methods, ndJsonStream, PROTOCOL_VERSION } = acp;

const child = spawn(plan.command[0], plan.command.slice(1), {
  cwd: plan.cwd,
  env: plan.env,
  stdio: ["pipe", "pipe", "pipe"],
});
let stderr = "";
child.stderr.on("data", (chunk) => (stderr += chunk));

const result = { loaded: [], turns: [], reads: [], writes: {} };
let turn = null;
let onChunk = null;
let onPermission = null;
const answers = [...(plan.answers ?? [])];
const buffers = { ...(plan.fs ?? {}) };

const app = client({ name: "tern-e2e" })
  .onNotification(methods.client.session.update, ({ params }) => {
    const into = turn ? turn.updates : result.loaded;
    into.push(params.update);
    if (params.update.sessionUpdate === "agent_message_chunk" && onChunk) onChunk();
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    turn.permissions.push(params);
    if (onPermission) {
      onPermission();
      return { outcome: { outcome: "cancelled" } };
    }
    const optionId = answers.shift() ?? "reject_once";
    return { outcome: { outcome: "selected", optionId } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    result.reads.push(params.path);
    if (plan.swapOnRead && !(params.path in buffers)) return { content: await swappedRead(params.path) };
    if (!(params.path in buffers)) throw new Error(`no buffer for ${params.path}`);
    let lines = buffers[params.path].split("\n");
    const start = (params.line ?? 1) - 1;
    lines = lines.slice(start, params.limit ? start + params.limit : undefined);
    return { content: lines.join("\n") };
  })
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    if (plan.refuseWrites) throw acp.RequestError.internalError(undefined, plan.refuseWrites);
    result.writes[params.path] = params.content;
    buffers[params.path] = params.content;
    return {};
  });

const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
try {
  await app.connectWith(stream, async (agent) => {
    const fs = plan.fs !== undefined;
    result.initialize = await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs && plan.fsWrites !== false }, terminal: false },
      clientInfo: { name: "tern-e2e", version: "1.0.0" },
    });
    const mcpServers = plan.mcpServers ?? [];
    let sessionId = plan.load;
    if (sessionId) {
      const loaded = await agent.request(methods.agent.session.load, { sessionId, cwd: plan.cwd, mcpServers });
      result.modes = loaded.modes;
    } else {
      const made = await agent.request(methods.agent.session.new, { cwd: plan.cwd, mcpServers });
      sessionId = made.sessionId;
      result.modes = made.modes;
    }
    result.sessionId = sessionId;
    for (const step of plan.steps ?? []) {
      if (step.setMode) {
        await agent.request(methods.agent.session.setMode, { sessionId, modeId: step.setMode });
        continue;
      }
      turn = { updates: [], permissions: [] };
      result.turns.push(turn);
      const cancel = () => agent.notify(methods.agent.session.cancel, { sessionId });
      onChunk = step.cancelOnChunk ? once(cancel) : null;
      onPermission = step.cancelOnPermission ? once(cancel) : null;
      try {
        const done = await agent.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: step.prompt }],
        });
        turn.stopReason = done.stopReason;
      } catch (e) {
        turn.error = String(e?.message ?? e);
      }
      turn = null;
    }
  });
} catch (e) {
  result.error = String(e?.stack ?? e);
}
child.stdin.end();
await new Promise((resolve) => {
  if (child.exitCode !== null) return resolve();
  child.on("exit", resolve);
  setTimeout(() => child.kill("SIGKILL"), 15000);
});
result.exitCode = child.exitCode;
result.stderr = stderr;
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(0);

// The file at `path` read the way an editor reads one (following links) while a command has a link to
// plan.swapOnRead in its place; the file is back before the answer. Past the file system clock's tick first.
async function swappedRead(path) {
  await new Promise((resolve) => setTimeout(resolve, 30));
  await nodeFs.rename(path, `${path}.kept`);
  await nodeFs.symlink(plan.swapOnRead, path);
  const content = await nodeFs.readFile(path, "utf8");
  await nodeFs.unlink(path);
  await nodeFs.rename(`${path}.kept`, path);
  return content;
}

function once(f) {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      f();
    }
  };
}
