#!/usr/bin/env python3
"""A real MCP client, the official Python SDK (`pip install mcp`), driving `harness mcp`.

tests/mcp.rs writes a plan and reads the report; every assertion is on the Rust side, this
script only speaks the protocol. Usage:

    mcp_client.py session PLAN.json   # the SDK's client: initialize, list tools, call tools
    mcp_client.py raw PLAN.json       # raw JSON-RPC lines the SDK would never send
    mcp_client.py cancel PLAN.json    # calls[0], cancelled at its first progress; calls[1]

PLAN.json: {"command": ..., "args": [...], "env": {...}, "cwd": ..., "stderr": PATH,
            "calls": [{"name": ..., "arguments": ...}, ...]}   (calls: session mode only)

In session mode, "{{marker:N}}" in a call's string arguments stands for the first redaction
marker in call N's result, so a plan can write back what a read showed.

The report (JSON on stdout) says, per call, the result's text and isError, the progress
messages the server sent, or the protocol error the SDK raised.
"""

import asyncio
import json
import subprocess
import sys
import time

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

# How long one request may take before the client gives up: long enough for a verified run
# against the stub model server on a busy machine, short enough that a hang fails the test.
REQUEST_TIMEOUT = 120


async def session(plan):
    params = StdioServerParameters(
        command=plan["command"], args=plan["args"], env=plan["env"], cwd=plan["cwd"]
    )
    report = {"calls": []}
    with open(plan["stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as client:
                initialized = await client.initialize()
                report["server"] = initialized.server_info.name
                report["instructions"] = initialized.instructions
                listed = await client.list_tools()
                report["tools"] = [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "inputSchema": tool.input_schema,
                    }
                    for tool in listed.tools
                ]
                for call in plan["calls"]:
                    call = with_markers(call, report["calls"])
                    report["calls"].append(await call_tool(client, call))
    return report


def with_markers(call, done):
    """The call with each "{{marker:N}}" in its string arguments replaced by the first
    redaction marker in the text of call N, as a model copies what it was shown."""
    def fill(value):
        if isinstance(value, str):
            for index, result in enumerate(done):
                token = "{{marker:%d}}" % index
                if token in value:
                    text = result.get("text", "")
                    start = text.find("[REDACTED:")
                    marker = text[start : text.index("]", start) + 1] if start >= 0 else token
                    value = value.replace(token, marker)
            return value
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fill(item) for item in value]
        return value

    return {**call, "arguments": fill(call.get("arguments"))}


async def call_tool(client, call):
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    try:
        result = await client.call_tool(
            call["name"], call.get("arguments"), progress_callback=on_progress
        )
    except MCPError as error:
        return {"protocol_error": str(error), "code": error.error.code}
    text = "".join(block.text for block in result.content if block.type == "text")
    return {"is_error": bool(result.is_error), "text": text, "progress": progress}


def start_raw(plan):
    server = subprocess.Popen(
        [plan["command"], *plan["args"]],
        cwd=plan["cwd"],
        env=plan["env"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=open(plan["stderr"], "w"),
    )

    def send(message):
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()

    def receive():
        line = server.stdout.readline()
        return json.loads(line) if line else None

    send({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}},
    })
    receive()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server, send, receive


def cancel(plan):
    """calls[0] with a progress token, cancelled (notifications/cancelled) when its first
    progress notification arrives; then a ping, then calls[1]. Reports what came back and
    how long calls[1] took to be answered (it waits for calls[0] to stop)."""
    server, send, receive = start_raw(plan)
    first, then = plan["calls"]
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {**first, "_meta": {"progressToken": "run"}}})
    report = {"before_cancel": []}
    while True:
        message = receive()
        report["before_cancel"].append(message)
        if message is None or message.get("method") == "notifications/progress":
            break
    cancelled_at = time.monotonic()
    send({"jsonrpc": "2.0", "method": "notifications/cancelled",
          "params": {"requestId": 1, "reason": "the user stopped it"}})
    send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": then})
    report["after_cancel"] = []
    while True:
        message = receive()
        report["after_cancel"].append(message)
        if message is None or message.get("id") == 3:
            break
    report["seconds_to_stop"] = time.monotonic() - cancelled_at
    server.stdin.close()
    try:
        report["exit"] = server.wait(timeout=REQUEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        server.kill()
        report["exit"] = "hung"
    return report


def raw(plan):
    """Malformed input on the wire: what no SDK client sends, answered (or ignored) without
    the server stopping; then a request cut off by the end of stdin."""
    server = subprocess.Popen(
        [plan["command"], *plan["args"]],
        cwd=plan["cwd"],
        env=plan["env"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=open(plan["stderr"], "w"),
    )

    def send(line):
        server.stdin.write(line if isinstance(line, bytes) else line.encode())
        server.stdin.write(b"\n")
        server.stdin.flush()

    def answer(wanted_id):
        """The next response with id `wanted_id`, and the responses seen before it."""
        seen = []
        while True:
            line = server.stdout.readline()
            if not line:
                return None, seen
            message = json.loads(line)
            if message.get("id") == wanted_id:
                return message, seen
            seen.append(message)

    report = {}
    send(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}},
    }))
    report["initialize"], _ = answer(1)
    send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    # Not JSON at all: ignored (there is no id to answer), as every official SDK does.
    send("this is not JSON {")
    # JSON, but not a JSON-RPC message.
    send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": 42}))
    # A method nobody serves.
    send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}))
    # A line longer than the 16 MiB limit: dropped unread.
    send(b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"' + b"a" * (17 << 20) + b'"}}')
    send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
    report["ping"], report["before_ping"] = answer(5)
    send(json.dumps({
        "jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "list_dir", "arguments": {"path": "."}},
    }))
    report["after"], _ = answer(6)
    # Cut off in the middle of a request: the end of input ends the session.
    server.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"rea')
    server.stdin.flush()
    server.stdin.close()
    try:
        report["exit"] = server.wait(timeout=REQUEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        server.kill()
        report["exit"] = "hung"
    report["rest"] = server.stdout.read().decode(errors="replace")
    return report


def main():
    mode, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path) as file:
        plan = json.load(file)
    if mode == "session":
        report = asyncio.run(session(plan))
    elif mode == "cancel":
        report = cancel(plan)
    else:
        report = raw(plan)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
