"""The floor for the RPC benchmark: the least an HTTP/1.1 keep-alive server
in Python can do per request (parse the head, read the body, send a fixed
JSON reply), with no JSON-RPC, auth or worker threads.

    python bare_http_server.py PORT [uvloop]

On asyncio's own event loop by default (the floor issue 15 sets), or on uvloop's,
which quilld runs on, to show what the loop alone is worth.
"""
import asyncio
import sys

REPLY = b'{"result":0,"error":null,"id":1}\n'
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
            b"Content-Length: " + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY)


async def serve(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    await reader.readexactly(int(line[15:]))
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port):
    server = await asyncio.start_server(serve, "127.0.0.1", port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[2:] == ["uvloop"]:
        import uvloop
        uvloop.run(main(int(sys.argv[1])))
    else:
        asyncio.run(main(int(sys.argv[1])))
