"""The livekit-server config a test node gets: loopback ports, and Redis for multi-node."""

from __future__ import annotations

import yaml

from steward_tools.livekit_server import render_config


def test_a_single_node_has_no_redis_and_a_node_on_redis_shares_it_with_its_own_ports() -> None:
    single = yaml.safe_load(render_config(7000, 7001, 7002))
    assert "redis" not in single and "node_selector" not in single
    assert single["rtc"]["node_ip"] == "127.0.0.1"
    nodes = [
        yaml.safe_load(render_config(p, p + 1, p + 2, redis="127.0.0.1:6390")) for p in (7100, 7200)
    ]
    assert [n["redis"] for n in nodes] == [{"address": "127.0.0.1:6390"}] * 2
    assert [n["node_selector"]["sort_by"] for n in nodes] == ["rooms", "rooms"]
    assert [(n["port"], n["rtc"]["tcp_port"], n["rtc"]["udp_port"]) for n in nodes] == [
        (7100, 7101, 7102),
        (7200, 7201, 7202),
    ]
    assert nodes[0]["keys"] == nodes[1]["keys"] == single["keys"]
