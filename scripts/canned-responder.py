#!/usr/bin/env python3
"""The server side of scripts/inproc-http.php's EXTERNAL=1 mode: a canned responder in its own process.

Inherits the server ends of the harness's socket pairs as descriptors 3 .. 3+N-1 (N in argv[1]) and
answers every complete request head it reads with the same fixed hello answer, until every connection
is closed. Run outside the harness's callgrind (an exec'd child is not traced), so what the harness
counts is its in-process client and the loop's share for it alone.
"""
import os
import selectors
import sys

ANSWER = (b"HTTP/1.1 200 OK\r\nServer: weft\r\nDate: Fri, 27 Nov 2026 08:30:00 GMT\r\n"
          b"Content-Type: text/plain\r\nContent-Length: 11\r\n\r\nHello World")

def main() -> None:
    count = int(sys.argv[1])
    selector = selectors.DefaultSelector()
    pending = {}
    for fd in range(3, 3 + count):
        os.set_blocking(fd, True)
        selector.register(fd, selectors.EVENT_READ)
        pending[fd] = b""
    while pending:
        for key, _ in selector.select():
            fd = key.fd
            data = os.read(fd, 65536)
            if not data:
                selector.unregister(fd)
                os.close(fd)
                del pending[fd]
                continue
            buffered = pending[fd] + data
            answers = buffered.count(b"\r\n\r\n")
            pending[fd] = buffered[buffered.rfind(b"\r\n\r\n") + 4:] if answers else buffered
            if answers:
                os.write(fd, ANSWER * answers)

main()
