"""Several livekit-server nodes on one throwaway Redis: LiveKit's multi-node mode, on
127.0.0.1 (tests; docs/DEPLOY.md, "Several livekit-server nodes")."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from steward_tools.livekit_server import NODES_KEY, ROOM_NODE_KEY, LiveKitServer
from steward_tools.redis_server import RedisServer


@dataclass
class LiveKitCluster:
    """`size` nodes, each on its own free signal, RTC TCP and RTC UDP ports, all with the same
    `redis:` section and key pair; `stop()` ends nodes and Redis."""

    size: int = 2
    redis: RedisServer = field(default_factory=RedisServer)
    nodes: list[LiveKitServer] = field(default_factory=list)

    def start(self, timeout: float = 20.0) -> LiveKitCluster:
        try:
            self.redis.start()
            for _ in range(self.size):
                self.nodes.append(LiveKitServer(redis=self.redis.address).start(timeout))
        except BaseException:
            self.stop()
            raise
        return self

    async def astart(self, timeout: float = 20.0) -> LiveKitCluster:
        return await asyncio.to_thread(self.start, timeout)

    def node_index(self) -> dict[str, int]:
        return {node.node_id: i for i, node in enumerate(self.nodes)}

    def room_nodes(self) -> dict[str, int]:
        """room -> index of the node hosting it, as LiveKit recorded it in Redis."""
        index = self.node_index()
        return {room: index.get(node, -1) for room, node in self.redis.hash(ROOM_NODE_KEY).items()}

    def wait_stats(self, node: int, timeout: float = 10.0) -> None:
        """Until `node` publishes its stats again (every 2 s): a room it took since then is
        counted when LiveKit places the next new room."""
        key = self.nodes[node].node_id
        before = self.redis.command("HGET", NODES_KEY, key)
        deadline = time.monotonic() + timeout
        while self.redis.command("HGET", NODES_KEY, key) == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"node {node} published no stats within {timeout}s")
            time.sleep(0.1)

    def wait_placed(self, room: str) -> None:
        """Until the node hosting `room` republished its stats: LiveKit places a new room on
        the node with the fewest rooms by those stats, so rooms created one after another,
        each waited for, alternate between the nodes."""
        self.wait_stats(self.room_nodes()[room])

    def stop(self) -> None:
        for node in self.nodes:
            with contextlib.suppress(Exception):
                node.stop()
        self.nodes.clear()
        self.redis.stop()
