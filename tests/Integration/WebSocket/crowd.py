"""A crowd of idle WebSocket clients (Python's `websockets`, Debian python3-websockets) for memory tests.

Usage: crowd.py URI COUNT [PARALLEL]
Opens COUNT connections to URI, PARALLEL handshakes at a time (default 32; 1 for memory figures that
a burst's pooled Fibers do not blur), and prints one JSON line: how many
are open, the HTTP status of each refused handshake, and any other failure (a reset, a timeout: what a
worker that died would cause). Then it holds them idle and obeys commands, one per line on stdin, each
answered with one JSON line:
  echo   every open connection sends a message and waits for it to come back
  wait   waits until the server has closed every connection: the close codes seen (1006: TCP ended
         without a close frame)
"""
import asyncio
import json
import sys

import websockets

async def open_one(uri, sockets, out):
    try:
        ws = await websockets.connect(uri, open_timeout=20, ping_interval=None, close_timeout=5, max_queue=4)
        sockets.append(ws)
    except websockets.exceptions.InvalidStatusCode as e:
        key = str(e.status_code)
        out["refused"][key] = out["refused"].get(key, 0) + 1
    except Exception as e:  # a reset, a timeout, a refused TCP connect
        out["errors"].append(type(e).__name__ + ": " + str(e)[:100])


async def echo(sockets):
    async def one(i, ws):
        try:
            await ws.send(f"m{i}")
            return await asyncio.wait_for(ws.recv(), 20) == f"m{i}"
        except Exception:
            return False
    results = []
    for start in range(0, len(sockets), 200):
        results += await asyncio.gather(*(one(start + i, ws) for i, ws in enumerate(sockets[start:start + 200])))
    return {"echoed": sum(results), "failed": len(results) - sum(results)}


async def wait_closed(sockets):
    codes = {}
    for ws in sockets:
        try:
            await asyncio.wait_for(ws.wait_closed(), 30)
            key = str(ws.close_code)
        except asyncio.TimeoutError:
            key = "still open"
        codes[key] = codes.get(key, 0) + 1
    return {"close_codes": codes}


async def main(uri, count, parallel):
    sockets, out = [], {"refused": {}, "errors": []}
    for start in range(0, count, parallel):
        await asyncio.gather(*(open_one(uri, sockets, out) for _ in range(min(parallel, count - start))))
    out["open"] = len(sockets)
    out["errors"] = out["errors"][:20]
    print(json.dumps(out), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if line == "echo":
            print(json.dumps(await echo(sockets)), flush=True)
        elif line == "wait":
            print(json.dumps(await wait_closed(sockets)), flush=True)
        else:
            break
    for ws in sockets:
        ws.transport.abort()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 32))
