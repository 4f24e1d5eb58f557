"""Real-client checks for Weft's WebSocket server with Python's `websockets` (Debian python3-websockets).

Usage: python_client.py SCENARIO PORT  ->  prints one JSON object with what the client saw.
"""
import asyncio
import json
import sys

import websockets


async def echo(uri):
    out = {}
    async with websockets.connect(uri, max_size=None) as ws:
        await ws.send("héllo ☃")
        out["text"] = await ws.recv()
        await ws.send(b"\x00\x01\xfe\xff")
        out["binary"] = list(await ws.recv())
        await ws.send(["frag", "ment", "ed"])  # a fragmented message
        out["fragmented"] = await ws.recv()
        big = "x" * 1_000_000
        await ws.send(big)
        out["big_ok"] = (await ws.recv()) == big
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 5)
        out["pong"] = True
        many = [f"m{i}" for i in range(500)]
        for m in many:
            await ws.send(m)
        out["ordered"] = [await ws.recv() for _ in many] == many
    out["close_code"] = ws.close_code
    return out


async def too_big(uri):
    async with websockets.connect(uri) as ws:
        await ws.send("y" * 2048)  # the /small endpoint allows 1024 bytes
        try:
            await ws.recv()
        except websockets.ConnectionClosed as e:
            return {"code": e.rcvd.code if e.rcvd else None, "reason": e.rcvd.reason if e.rcvd else None}
    return {"code": "none"}


async def server_close(uri):
    async with websockets.connect(uri + "?code=4001&reason=bye") as ws:
        await ws.send("go")
        try:
            await ws.recv()
        except websockets.ConnectionClosed as e:
            return {"code": e.rcvd.code, "reason": e.rcvd.reason}
    return {"code": "none"}


async def handler_throws(uri):
    async with websockets.connect(uri) as ws:
        await ws.send("go")
        try:
            await ws.recv()
        except websockets.ConnectionClosed as e:
            return {"code": e.rcvd.code, "reason": e.rcvd.reason}
    return {"code": "none"}


async def protocols(uri):
    async with websockets.connect(uri, subprotocols=["chat.v1", "chat.v2"]) as ws:
        negotiated = ws.subprotocol
        told = await ws.recv()
    async with websockets.connect(uri, subprotocols=["other"]) as ws2:
        told2 = await ws2.recv()
    return {"negotiated": negotiated, "told": told, "none": told2}


async def chat(uri):
    a = await websockets.connect(uri)
    b = await websockets.connect(uri)
    await a.recv(), await b.recv()  # "joined N"
    await a.send("hi from a")
    got = [await a.recv(), await b.recv()]
    await a.close()
    await b.close()
    return {"got": got}


async def wait_for_close(uri):
    """Connects, says it is ready, and reports the close the server sends (for stop/idle tests)."""
    async with websockets.connect(uri, ping_interval=None) as ws:
        print("CONNECTED", flush=True)
        try:
            while True:
                await asyncio.wait_for(ws.recv(), 30)
        except websockets.ConnectionClosed as e:
            return {"code": e.rcvd.code if e.rcvd else None, "reason": e.rcvd.reason if e.rcvd else None}


async def chat_example(uri):
    """examples/websocket-chat.php: join notices, a message to everyone, a leave notice."""
    alice = await websockets.connect(uri + "?name=alice")
    seen = [await alice.recv()]
    bob = await websockets.connect(uri + "?name=bob")
    seen += [await alice.recv(), await bob.recv()]
    await alice.send("hi all")
    seen += [await alice.recv(), await bob.recv()]
    await bob.close()
    seen.append(await alice.recv())
    await alice.close()
    return {"seen": seen}


SCENARIOS = {
    "chat_example": ("/", chat_example),
    "echo": ("/echo", echo),
    "too_big": ("/small", too_big),
    "server_close": ("/close", server_close),
    "throws": ("/throw", handler_throws),
    "protocols": ("/protocols", protocols),
    "chat": ("/room", chat),
    "wait_for_close": ("/echo", wait_for_close),
}

if __name__ == "__main__":
    path, scenario = SCENARIOS[sys.argv[1]]
    result = asyncio.run(asyncio.wait_for(scenario(f"ws://127.0.0.1:{sys.argv[2]}{path}"), 60))
    print(json.dumps(result), flush=True)
