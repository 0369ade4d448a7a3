"""The stdio floor: the least an MCP echo server can do (asyncio + orjson, no framework)."""

import asyncio
import os
import sys

import orjson

sys.path.insert(0, os.path.dirname(__file__))
from stdio_floor_answers import answer


async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    while line := await reader.readline():
        message = orjson.loads(line)
        if "id" in message:
            transport.write(
                orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})
                + b"\n"
            )


asyncio.run(main())
