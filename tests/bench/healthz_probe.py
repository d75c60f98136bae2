"""Probe an api's /healthz at a fixed rate, in a process of its own; print the results as JSON.

    python healthz_probe.py URL SECONDS [INTERVAL] [TIMEOUT]

A probe starts every INTERVAL seconds (default 0.02) whether or not the earlier ones answered, each on
a new connection (as a kubelet's probe), and gives up after TIMEOUT seconds (default 10). A probe's
latency counts from the moment it was due, so a stalled api shows as every probe due during the stall
being late, not as one slow probe. Runs in its own process so that the load generator's event loop
(httpx, a few hundred requests per second) does not delay the probes it measures.

Output (one JSON object on stdout): ``latencies_ms`` (of the probes that got an answer), ``statuses``
(answers by status code), ``timeouts``, ``errors`` (connection errors), ``probes``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit


@dataclass
class Probes:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    timeouts: int = 0
    errors: int = 0
    probes: int = 0


async def _probe(host: str, port: int, due: float, give_up: float, out: Probes) -> None:
    writer = None
    try:
        async with asyncio.timeout(give_up - (time.perf_counter() - due)):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            await reader.read()  # the body, to the end (Connection: close)
        out.latencies_ms.append((time.perf_counter() - due) * 1000)
        code = head[9:12].decode()
        out.statuses[code] = out.statuses.get(code, 0) + 1
    except TimeoutError:
        out.timeouts += 1
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        out.errors += 1
    finally:
        if writer is not None:
            writer.close()


async def probe(url: str, seconds: float, interval: float = 0.02, give_up: float = 10.0) -> Probes:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    out = Probes()
    tasks = []
    start = time.perf_counter()
    while (due := start + out.probes * interval) < start + seconds:
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_probe(host, port, due, give_up, out)))
        out.probes += 1
    await asyncio.gather(*tasks)
    return out


def main() -> None:
    url, seconds = sys.argv[1], float(sys.argv[2])
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    give_up = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    print(json.dumps(asdict(asyncio.run(probe(url, seconds, interval, give_up)))))


if __name__ == "__main__":
    main()
