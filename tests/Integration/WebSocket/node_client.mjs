// A second independent client: Node's built-in WebSocket (undici; `node --experimental-websocket` on
// Node 20, built in from Node 22). Usage: node node_client.mjs PORT -> one JSON line.
const port = process.argv[2];
const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`);
ws.binaryType = 'arraybuffer';
const got = [];
const big = 'z'.repeat(200000);
const timer = setTimeout(() => { console.log(JSON.stringify({ error: 'timeout', got })); process.exit(1); }, 20000);
ws.onopen = () => {
  ws.send('hello from node ☃');
  ws.send(new Uint8Array([0, 1, 2, 253, 254, 255]));
  ws.send(big);
};
ws.onmessage = (event) => {
  if (typeof event.data === 'string') {
    got.push(event.data === big ? `big:${event.data.length}` : event.data);
  } else {
    got.push(Array.from(new Uint8Array(event.data)));
  }
  if (got.length === 3) {
    ws.close(4321, 'done');
  }
};
ws.onclose = (event) => {
  clearTimeout(timer);
  console.log(JSON.stringify({ got, code: event.code, reason: event.reason, clean: event.wasClean }));
};
