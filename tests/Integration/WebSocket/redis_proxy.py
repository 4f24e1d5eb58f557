"""A TCP proxy to Redis that a test can take down and bring back, for a Redis outage that other users
of the shared Redis never see. Usage: redis_proxy.py UPSTREAM_PORT -> prints "READY <port>".

SIGUSR1: cut every proxied connection and refuse new ones (prints DOWN); SIGUSR2: accept again on the
same port (prints UP). SIGTERM ends it.
"""
import asyncio
import signal
import sys

UPSTREAM = int(sys.argv[1])
pairs = set()
state = {"server": None, "port": 0}


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer):
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", UPSTREAM)
    except OSError:
        client_writer.transport.abort()
        return
    pair = (client_writer, up_writer)
    pairs.add(pair)
    try:
        await asyncio.gather(pipe(client_reader, up_writer), pipe(up_reader, client_writer))
    finally:
        pairs.discard(pair)


async def listen(port):
    return await asyncio.start_server(handle, "127.0.0.1", port, reuse_address=True)


def down():
    if state["server"] is not None:
        state["server"].close()
        state["server"] = None
    for client_writer, up_writer in list(pairs):
        client_writer.transport.abort()
        up_writer.transport.abort()
    print("DOWN", flush=True)


async def up():
    if state["server"] is None:
        state["server"] = await listen(state["port"])
    print("UP", flush=True)


async def main():
    state["server"] = await listen(0)
    state["port"] = state["server"].sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, down)
    loop.add_signal_handler(signal.SIGUSR2, lambda: asyncio.ensure_future(up()))
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    print(f"READY {state['port']}", flush=True)
    await stop.wait()


asyncio.run(main())
