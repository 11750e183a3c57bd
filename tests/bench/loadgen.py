"""A keep-alive HTTP load generator: N concurrent connections, each sending
JSON-RPC POSTs back to back. Runs in its own process so that the client and
the server under test do not share an interpreter.

    python loadgen.py HOST PORT AUTH_HEADER BODY CONNECTIONS SECONDS
(BODY "@path": the body is read from that file, for bodies too long for a command line)
prints one JSON line: {"requests": n, "seconds": s, "latencies_us": [...sampled]}
"""
import asyncio
import json
import sys
import time


async def client(host, port, request, deadline, latencies, counts):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.split(b"\r\n")[0].decode())
            latencies.append((time.perf_counter() - started) * 1e6)
            counts[0] += 1
    finally:
        writer.close()


async def run(host, port, auth, body, connections, seconds):
    request = (f"POST / HTTP/1.1\r\nHost: {host}\r\nAuthorization: {auth}\r\n"
               f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body.encode()
    latencies, counts = [], [0]
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(client(host, port, request, deadline, latencies, counts) for _ in range(connections)))
    elapsed = time.perf_counter() - started
    return {"requests": counts[0], "seconds": elapsed, "latencies_us": latencies}


if __name__ == "__main__":
    host, port, auth, body, conns, secs = sys.argv[1:7]
    if body.startswith("@"):
        with open(body[1:]) as f:
            body = f.read()
    print(json.dumps(asyncio.run(run(host, int(port), auth, body, int(conns), float(secs)))))
