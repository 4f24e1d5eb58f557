"""Real-client checks of Weft's WebSocket hub (examples/websocket-hub-chat.php) across two instances,
with Python's `websockets` (Debian python3-websockets).

Usage: hub_client.py SCENARIO PORT_A PORT_B [...] -> prints one JSON object with what the clients saw.
A timeout waiting for an expected message fails with everything that client received meanwhile.
"""
import asyncio
import fnmatch
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import websockets

WAIT = 10.0


class Client:
    def __init__(self, name, ws):
        self.name = name
        self.ws = ws
        self.seen = []

    async def expect(self, text, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name} did not get {text!r}; it got {self.seen!r}")
            try:
                message = await asyncio.wait_for(self.ws.recv(), left)
            except asyncio.TimeoutError:
                continue
            self.seen.append(message)
            if fnmatch.fnmatchcase(message, text):
                return message

    async def send(self, text):
        await self.ws.send(text)


async def join(port, name, room="r"):
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/?room={room}&name={name}")
    return Client(name, ws)


def stats(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/hub/stats", timeout=5) as response:
        return json.loads(response.read())


async def wait_stats(port, condition, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while True:
        current = stats(port)
        if condition(current):
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {current!r}")
        await asyncio.sleep(0.05)


async def cross(port_a, port_b):
    out = {}
    a1 = await join(port_a, "a1")
    out["a1_joined"] = await a1.expect("* a1 joined r*")
    b1 = await join(port_b, "b1")
    out["b1_joined"] = await b1.expect("* b1 joined r*")
    out["a1_saw_b1_join"] = await a1.expect("* b1 joined r*")
    a2 = await join(port_a, "a2")
    out["b1_saw_a2_join"] = await b1.expect("* a2 joined r*")
    await b1.send("hello from B")
    out["a1_got"] = await a1.expect("b1: hello from B")
    out["a2_got"] = await a2.expect("b1: hello from B")
    await a1.send("hello from A")
    out["b1_got"] = await b1.expect("a1: hello from A")
    await a1.expect("a1: hello from A")
    await a1.send("/who")
    out["a1_who"] = await a1.expect("* * here*")
    await b1.send("/who")
    out["b1_who"] = await b1.expect("* * here*")
    await a2.ws.close()
    out["b1_saw_a2_leave"] = await b1.expect("* a2 left")
    await b1.send("/who")
    out["b1_who_after_leave"] = await b1.expect("* * here*")
    # Each message once: the publishing instance delivers its own, the other instance never echoes it back.
    await a1.send("/who")
    await a1.expect("* * here*")
    out["a1_copies_of_own"] = a1.seen.count("a1: hello from A")
    out["a1_copies_of_b1"] = a1.seen.count("b1: hello from B")
    out["b1_copies_of_a1"] = b1.seen.count("a1: hello from A")
    await a1.ws.close()
    await b1.ws.close()
    return out


def redis_command(port, *args):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(f"*{len(args)}\r\n".encode() + b"".join(f"${len(a)}\r\n{a}\r\n".encode() for a in args))
        return s.recv(65536).decode()


def redis_connections_of(pid, redis_port):
    """Local addresses of the TCP connections process $pid holds to Redis (from `ss`)."""
    lines = subprocess.run(["ss", "-tnpH", "state", "established", f"( dport = :{redis_port} )"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    return [line.split()[2] for line in lines if f"pid={pid}," in line]


async def killed(port_a, port_b, redis_port, worker_a):
    out = {}
    a1 = await join(port_a, "a1")
    await a1.expect("* a1 joined r*")
    b1 = await join(port_b, "b1")
    await a1.expect("* b1 joined r*")
    addresses = redis_connections_of(worker_a, redis_port)
    out["addresses"] = addresses
    out["killed"] = [redis_command(redis_port, "CLIENT", "KILL", "ADDR", a).strip() for a in addresses]
    out["stats_a"] = await wait_stats(port_a, lambda s: s["reconnects"] >= 1 and s["subscribed"], "instance A to subscribe again")
    await a1.send("local after kill")
    out["a1_local"] = await a1.expect("a1: local after kill")
    out["b1_got_a1"] = await b1.expect("a1: local after kill")
    await b1.send("from B after kill")
    out["a1_got_b1"] = await a1.expect("b1: from B after kill")
    await a1.ws.close()
    await b1.ws.close()
    return out


async def outage(port_a, port_b, proxy_pid):
    out = {}
    a1 = await join(port_a, "a1")
    await a1.expect("* a1 joined r*")
    a2 = await join(port_a, "a2")
    await a1.expect("* a2 joined r*")
    b1 = await join(port_b, "b1")
    await a1.expect("* b1 joined r*")
    await a2.expect("* b1 joined r*")
    # A worker counts gaps in another's numbers from the first message of it that it hears.
    await a1.send("before outage")
    await b1.expect("a1: before outage")

    os.kill(proxy_pid, signal.SIGUSR1)  # Redis is unreachable from instance A from now on
    out["down"] = await wait_stats(port_a, lambda s: not s["subscribed"], "instance A to notice the outage")
    await b1.send("from B during outage")
    await b1.expect("b1: from B during outage")
    await a1.send("from A during outage")
    out["a1_local"] = await a1.expect("a1: from A during outage")
    out["a2_local"] = await a2.expect("a1: from A during outage")
    out["a1_told"] = await a1.expect("* only this server got that:*")
    await a1.send("/who")
    out["a1_who_during"] = await a1.expect("* * here*")

    os.kill(proxy_pid, signal.SIGUSR2)  # reachable again
    out["up"] = await wait_stats(port_a, lambda s: s["subscribed"] and s["reconnects"] >= 1, "instance A to subscribe again")
    await b1.send("from B after outage")
    out["a1_after"] = await a1.expect("b1: from B after outage")
    await a1.send("from A after outage")
    out["b1_after"] = await b1.expect("a1: from A after outage")
    out["stats_a"] = await wait_stats(port_a, lambda s: s["missed"] >= 1, "instance A to count what it missed")
    out["stats_b"] = await wait_stats(port_b, lambda s: s["missed"] >= 1, "instance B to count what it missed")
    out["a1_saw_b_during"] = "b1: from B during outage" in a1.seen
    out["b1_saw_a_during"] = "a1: from A during outage" in b1.seen
    for client in (a1, a2, b1):
        await client.ws.close()
    return out


SCENARIOS = {"cross": cross, "killed": killed, "outage": outage}

if __name__ == "__main__":
    scenario = SCENARIOS[sys.argv[1]]
    args = [int(a) for a in sys.argv[2:]]
    print(json.dumps(asyncio.run(asyncio.wait_for(scenario(*args), 60))))
