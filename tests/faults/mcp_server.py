# A tiny stdio MCP server for the fault suite: newline-delimited JSON-RPC on stdin/stdout. It answers initialize and
# tools/list, writes its pid (and a child's) to files, then on tools/call either exits at once ("crash") or hangs
# ("hang") with a child in its process group, until something ends the group.
import json, os, subprocess, sys

mode, piddir = sys.argv[1], sys.argv[2]
with open(os.path.join(piddir, "server.pid"), "w") as f:
    f.write(str(os.getpid()))


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    method, rid = req.get("method"), req.get("id")
    if method == "initialize":
        version = req.get("params", {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "faulty", "version": "1.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "work",
            "description": "Does some work.",
            "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        if mode == "crash":
            sys.stderr.write("faulty: crashing on purpose\n")
            os._exit(3)
        child = subprocess.Popen(["sleep", "33"])
        with open(os.path.join(piddir, "child.pid"), "w") as f:
            f.write(str(child.pid))
        child.wait()
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
