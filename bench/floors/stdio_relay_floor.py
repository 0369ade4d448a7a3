"""The relay floor: the least a stdio proxy can do. It starts the child server given on its
command line and copies bytes both ways (no parsing, no renaming, no bookkeeping), on
uvloop when installed, as our gateway runs. What a gateway costs over a direct call can
be no less than what this costs: a third process and its pipe hops."""

import asyncio
import sys


async def pump(reader: asyncio.StreamReader, write) -> None:
    while chunk := await reader.read(1 << 16):
        write(chunk)


async def main() -> None:
    loop = asyncio.get_running_loop()
    child = await asyncio.create_subprocess_exec(
        *sys.argv[1:], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    stdin = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    stdout, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    assert child.stdin is not None and child.stdout is not None
    await asyncio.gather(pump(stdin, child.stdin.write), pump(child.stdout, stdout.write))


try:
    import uvloop

    uvloop.run(main())
except ImportError:
    asyncio.run(main())
