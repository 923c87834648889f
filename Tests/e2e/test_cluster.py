"""`[cluster]`: several `clawrelay serve` nodes on one PostgreSQL (a server this suite starts,
`postgres_server.py`), each with its own data directory and listeners. A device may connect to any
node; what one node stores every node's devices see, in order; a node that dies is found dead by
the others within its lease, and the turns it held end or move on."""
import asyncio
import json
import signal
import subprocess

import postgres_server
from cluster_nodes import LEASE_SECONDS, companion_upstream, node_config
from conftest import (accounts, async_wait_for, auth, is_assistant_final, is_user_echo, make_config, message_frame, pair_and_approve,
                      pair_first_admin, relay_bin, setup_admin, wait_account)


async def test_three_nodes_show_one_users_messages_in_order_on_every_node(relay_factory):
    database = postgres_server.shared().create_database()
    nodes = [relay_factory(node_config(database, f"node{index}")) for index in (1, 2, 3)]
    admin, sender = await setup_admin(nodes[0])
    others = []
    for node, name in ((nodes[1], "Second"), (nodes[2], "Third")):
        device = await pair_and_approve(nodes[0], sender, user_id=admin.user_id, name=name)
        client, _ = await auth(node, device, name=name)
        others.append(client)
    texts = [f"message {index}" for index in range(5)]
    for text in texts:
        await sender.send_json(message_frame(text))
        await sender.recv_until(is_assistant_final(f"echo: {text}"), timeout=10)
    for client in others:
        seen = []
        while len(seen) < 2 * len(texts):
            frame, _ = await client.recv_until(lambda f: is_user_echo()(f) or is_assistant_final()(f), timeout=10)
            seen.append(frame["content"])
        assert seen == [line for text in texts for line in (text, f"echo: {text}")], seen
    for client in [sender] + others:
        await client.close()


async def held_turn_and_one_behind(relay_factory, held: str, behind: str):
    """Two nodes: the first runs a turn its backend never answers in time (`held`), and a device of
    the same user on the second sends the next message of the conversation (`behind`), which
    waits for it. Returns the two nodes and the second node's client."""
    database = postgres_server.shared().create_database()
    first = relay_factory(node_config(database, "node1", echo_delay_ms=600_000))
    second = relay_factory(node_config(database, "node2"))
    admin, sender = await setup_admin(first)
    device = await pair_and_approve(first, sender, user_id=admin.user_id)
    waiting, _ = await auth(second, device, name="waiting")
    await sender.send_json(message_frame(held))
    await waiting.recv_until(is_user_echo(held), timeout=10)
    await waiting.send_json(message_frame(behind))
    await waiting.recv_until(is_user_echo(behind), timeout=10)
    return first, second, waiting


async def test_a_killed_node_is_declared_dead_and_the_turn_behind_its_runs_on_a_survivor(relay_factory):
    first, second, waiting = await held_turn_and_one_behind(relay_factory, "held by node1", "queued on node2")
    first.kill()
    final, frames = await waiting.recv_until(is_assistant_final("echo: queued on node2"), timeout=LEASE_SECONDS + 10)
    assert not any(is_assistant_final("echo: held by node1")(f) for f in frames), frames
    log = second.stderr_text()
    assert "relay node declared dead" in log and "node1" in log, log[-3000:]
    await waiting.close()


def test_a_node_id_in_use_by_a_running_node_is_refused(relay_factory):
    database = postgres_server.shared().create_database()
    relay_factory(node_config(database, "twin"))
    second = relay_factory(node_config(database, "twin"), start=False)
    result = subprocess.run([str(relay_bin()), "serve", "--config", str(second.config_path), "--data-dir", str(second.data_dir)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "node id twin is in use by another running node" in result.stderr, result.stderr


async def test_a_node_frozen_past_its_lease_is_replaced_and_exits_when_it_wakes(relay_factory):
    frozen, _, waiting = await held_turn_and_one_behind(relay_factory, "held by the frozen node", "queued behind it")
    frozen.proc.send_signal(signal.SIGSTOP)
    try:
        await waiting.recv_until(is_assistant_final("echo: queued behind it"), timeout=LEASE_SECONDS + 10)
    finally:
        frozen.proc.send_signal(signal.SIGCONT)
    # Awake, it finds itself declared dead at its next heartbeat and exits for its supervisor.
    frozen.expected_exit = 75
    assert frozen.proc.wait(timeout=15) == 75, frozen.stderr_text()[-3000:]
    assert "another node declared this one dead" in frozen.stderr_text()
    await waiting.close()


async def test_nodes_ride_out_a_postgresql_restart(relay_factory):
    server = postgres_server.PostgresServer()
    try:
        database = server.create_database()
        nodes = []
        for index in (1, 2):
            cfg = node_config(database, f"node{index}")
            cfg["store"]["url"] = server.url(database)
            nodes.append(relay_factory(cfg))
        admin, sender = await setup_admin(nodes[0])
        device = await pair_and_approve(nodes[0], sender, user_id=admin.user_id)
        other, _ = await auth(nodes[1], device, name="other")
        incarnations = server.psql("SELECT node_id, incarnation FROM nodes ORDER BY node_id", database)
        server.restart()
        restarted = server.psql("SELECT now()", database).strip()
        # Both nodes come back as themselves and keep beating past a lease after the restart: the
        # sweeps that ran by then found nobody dead.
        beating = f"SELECT count(*) FROM nodes WHERE heartbeat_at > '{restarted}'::timestamptz + interval '{LEASE_SECONDS + 1} seconds'"
        await async_wait_for(lambda: server.psql(beating, database).strip() == "2", timeout=30, what="heartbeats after the restart")
        assert server.psql("SELECT node_id, incarnation FROM nodes ORDER BY node_id", database) == incarnations
        for node in nodes:
            assert "postgres: node reconnected" in node.stderr_text(), node.stderr_text()[-3000:]
        # The first write after the restart may find its connection gone: the client retries the
        # same message id, as apps do, and the relay stores it once.
        frame = message_frame("after the restart")
        for _ in range(20):
            await sender.send_json(frame)
            reply, _ = await sender.recv_until(
                lambda f: is_assistant_final("echo: after the restart")(f) or (f.get("type") == "error" and f.get("messageId") == frame["id"]),
                timeout=10)
            if reply.get("type") != "error":
                break
        else:
            raise AssertionError("the message was never stored after the restart")
        await other.recv_until(is_assistant_final("echo: after the restart"), timeout=10)
        assert all(node.running for node in nodes), [node.stderr_text()[-2000:] for node in nodes]
        for node in nodes:
            assert "declared dead" not in node.stderr_text(), node.stderr_text()[-3000:]
        await sender.close()
        await other.close()
    finally:
        for node in nodes:
            node.terminate()
        server.stop()


def test_the_bench_measures_delivery_across_nodes(tmp_path):
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/bin"}
    result = subprocess.run([str(relay_bin()), "bench", "fanout", "roundtrip", "--nodes", "2", "--smoke", "--json"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    figures = {f["metric"]: f["value"] for f in json.loads(result.stdout)["figures"] if f["scenario"] == "fanout"}
    assert figures["nodes"] == 2 and figures["messages"] > 0, figures
    assert figures["delivery_same_node_p99_ms"] > 0 and figures["delivery_other_nodes_p99_ms"] > 0, figures
    assert figures["postgres_cpu_per_message"] > 0, figures
    roundtrip = {f["metric"]: f["value"] for f in json.loads(result.stdout)["figures"] if f["scenario"] == "roundtrip"}
    assert roundtrip["nodes"] == 2 and roundtrip["messages"] > 0 and roundtrip["relay_and_postgres_cpu_per_message"] > 0, roundtrip
    chaos = subprocess.run([str(relay_bin()), "bench", "cluster-chaos", "--smoke", "--json"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert chaos.returncode == 0, chaos.stderr[-3000:]
    figures = {f["metric"]: f["value"] for f in json.loads(chaos.stdout)["figures"] if f["scenario"] == "cluster-chaos"}
    assert figures["kills"] == 2 and figures["kill_to_next_answer_p50_ms"] > 0, figures
    assert figures["dead_turns_answered"] == 0 and figures["answers_twice"] == 0, figures
    assert figures["load_acknowledged"] > 0 and figures["load_lost"] == 0, figures
    assert figures["load_answered_twice"] == 0 and figures["load_stored_twice"] == 0, figures
    refused = subprocess.run([str(relay_bin()), "bench", "idle", "--nodes", "2"], capture_output=True, text=True, timeout=60,
                             cwd=tmp_path, env=env)
    assert refused.returncode != 0 and "idle runs on one relay; roundtrip, fanout and cluster-chaos run on cluster nodes" in refused.stderr, \
        refused.stderr


async def test_two_devices_on_two_nodes_get_one_runner_in_acceptance_order(relay_factory, tmp_path):
    # A backend that fails when two of its runs overlap, wherever they run: a lock directory both
    # nodes' runs take (mkdir is atomic), held while it answers.
    lock = tmp_path / "one-at-a-time"
    script = f'mkdir {lock} 2>/dev/null || {{ echo overlap; exit 9; }}; sleep 0.02; printf "ran: %s" "$(cat)"; rmdir {lock}'
    database = postgres_server.shared().create_database()
    nodes = []
    for index in (1, 2):
        cfg = node_config(database, f"node{index}")
        cfg["clawline"].update({"backend": "cmd", "messages_per_second": 1000, "max_queued_messages": 200})
        cfg["backends"][1].update({"command": ["/bin/sh", "-c", script], "timeout_seconds": 30})
        nodes.append(relay_factory(cfg))
    admin, first = await setup_admin(nodes[0])
    device = await pair_and_approve(nodes[0], first, user_id=admin.user_id)
    second, _ = await auth(nodes[1], device, name="second")
    count = 20
    for index in range(count):
        await first.send_json(message_frame(f"a{index}"))
        await second.send_json(message_frame(f"b{index}"))
    # Every message's answer, seen from one device: each answer follows its message, in the
    # order the messages were accepted, and none found another run under way.
    users, answers = [], []
    while len(answers) < 2 * count:
        frame, _ = await first.recv_until(lambda f: is_user_echo()(f) or is_assistant_final()(f), timeout=30)
        (users if frame["role"] == "user" else answers).append(frame["content"])
    assert sorted(users) == sorted([f"a{i}" for i in range(count)] + [f"b{i}" for i in range(count)]), users
    assert answers == [f"ran: {text}" for text in users], answers
    await first.close()
    await second.close()


async def test_killing_a_node_under_load_loses_no_acknowledged_message_and_answers_none_twice(relay_factory):
    database = postgres_server.shared().create_database()
    victim = relay_factory(node_config(database, "node1", echo_delay_ms=150))
    steady = relay_factory(node_config(database, "node2", echo_delay_ms=150))
    for node in (victim, steady):
        node.config_path.write_text(node.config_path.read_text().replace("messages_per_second = 5", "messages_per_second = 1000"))
    victim.restart()
    steady.restart()
    admin, sender = await setup_admin(victim)
    device = await pair_and_approve(victim, sender, user_id=admin.user_id)
    watcher, _ = await auth(steady, device, name="watcher")
    sent: dict[str, str] = {}  # the watcher's message ids, by text
    frames: list[dict] = []
    for round in range(3):
        for index in range(4):
            frame = message_frame(f"r{round} steady {index}")
            sent[frame["content"]] = frame["id"]
            await watcher.send_json(frame)
            await sender.send_json(message_frame(f"r{round} doomed {index}"))
        # Kill the node once the watcher has seen this round's messages from it: turns are in
        # flight on both nodes.
        seen, skipped = await watcher.recv_until(is_user_echo(f"r{round} doomed 3"), timeout=15)
        frames += skipped + [seen]
        victim.kill()
        victim.start()
        sender, _ = await auth(victim, admin, name=f"admin-{round}")
    # Every message the watcher sent was acknowledged and gets exactly one answer or failure.
    def settled(content: str) -> bool:
        answers = [f for f in frames if is_assistant_final(f"echo: {content}")(f)]
        errors = [f for f in frames if f.get("type") == "error" and f.get("messageId") == sent[content]]
        return len(answers) + len(errors) >= 1
    while not all(settled(content) for content in sent):
        frame, skipped = await watcher.recv_until(lambda f: True, timeout=30)
        frames += skipped + [frame]
    acked = {f["id"] for f in frames if f.get("type") == "ack"}
    assert set(sent.values()) <= acked, "every message was acknowledged"
    for content, message_id in sent.items():
        answers = [f for f in frames if is_assistant_final(f"echo: {content}")(f)]
        errors = [f for f in frames if f.get("type") == "error" and f.get("messageId") == message_id]
        assert len(answers) + len(errors) == 1, (content, answers, errors)
    finals = [f["id"] for f in frames if is_assistant_final()(f)]
    assert len(finals) == len(set(finals)), "no answer reached the watcher twice"
    echoes = [f["id"] for f in frames if is_user_echo()(f)]
    assert len(echoes) == len(set(echoes)), "no message reached the watcher twice"
    await watcher.close()
    await sender.close()


async def test_a_clawline_device_and_a_backgrounded_companion_device_on_other_nodes_see_one_history(relay_factory, tmp_path):
    from companion_client import CompanionClient, companion_config, make_projects, rest_json, result_of, write_config
    database = postgres_server.shared().create_database()

    def config(index: int, user_id: str | None = None) -> dict:
        cfg = companion_config(projects_root=make_projects(tmp_path / f"projects{index}"), **({"user_id": user_id} if user_id else {}))
        cfg["store"] = {"kind": "postgres", "url": postgres_server.shared().url(database)}
        cfg["cluster"] = {"node_id": f"node{index}", "heartbeat_seconds": 1, "lease_seconds": LEASE_SECONDS}
        return cfg

    first = relay_factory(config(1))
    admin, _ = await setup_admin(first)
    first.terminate()
    write_config(first, config(1, admin.user_id))
    first.start()
    second = relay_factory(config(2, admin.user_id))
    third = relay_factory(config(3, admin.user_id))
    claw, _ = await auth(first, admin, name="clawline")
    watcher_device = await pair_and_approve(first, claw, user_id=admin.user_id)
    watcher, _ = await auth(second, watcher_device, name="watcher")
    await claw.send_json(message_frame("start the timeline"))
    await claw.recv_until(is_assistant_final("echo: start the timeline"), timeout=10)
    timeline = next(s for s in rest_json(third, "GET", "/api/sessions")["sessions"] if s.startswith("cv_"))
    # A Companion phone on the third node holds the timeline, then goes to the background.
    phone = await CompanionClient.connect(third, device_id="phone")
    await phone.subscribe(timeline)
    await claw.send_json(message_frame("while it looks"))
    await phone.recv_until(result_of(timeline, "echo: while it looks"), 10)
    await phone.background(timeline)
    await claw.send_json(message_frame("while it is away"))
    await claw.recv_until(is_assistant_final("echo: while it is away"), timeout=10)
    # The Clawline device on the second node saw every message, in order.
    seen = []
    while len(seen) < 6:
        frame, _ = await watcher.recv_until(lambda f: is_user_echo()(f) or is_assistant_final()(f), timeout=10)
        seen.append(frame["content"])
    texts = ["start the timeline", "while it looks", "while it is away"]
    assert seen == [line for text in texts for line in (text, f"echo: {text}")], seen
    # Back in the foreground, the phone gets what it missed from the third node's queue, once.
    await phone.close()
    again = await CompanionClient.connect(third, device_id="phone", name="phone-again")
    await again.send("subscribe", {"events": ["assistantMessage"], "sessionIds": [timeline]})
    result, before = await again.recv_until(result_of(timeline, "echo: while it is away"), 10)
    assert result.get("_queued") is True, result
    users = [f for f in before if f["type"] == "userMessage" and f["data"]["content"] == "while it is away"]
    assert len(users) == 1 and users[0].get("_queued") is True, before
    assert not any(f["type"] == "userMessage" and f["data"]["content"] == "while it looks" for f in before), "what it saw is not queued"
    for client in (claw, watcher, phone, again):
        await client.close()


def holder_of(node, account: str) -> str | None:
    """The node id `clawrelay accounts` names as the live holder of `account` (None: nobody)."""
    listed = next((a for a in accounts(node) if a["name"] == account), None)
    return listed.get("node") if listed and listed["state"] == "connected" else None


def connected_upstream(node, account: str) -> bool:
    """Whether this node's own log shows its link of `account` connected."""
    return any("upstream account" in line and f"account={account}" in line and "state=connected" in line
               for line in node.stderr_text().splitlines())


def clawline_account(node) -> dict:
    """The node's own copy of the `claw` account's file (device id, token the provider issued)."""
    return json.loads((node.data_dir / "accounts" / "claw.clawline.json").read_text())


def pending_on(provider) -> list[str]:
    return [d["deviceId"] for d in provider.devices() if d["status"] == "pending"]


def stored_clawline_account(database: str) -> str:
    """The cluster's copy of the `claw` account's file, as text ('' before any is stored)."""
    return postgres_server.shared().psql(
        "SELECT convert_from(bytes, 'UTF8') FROM account_files WHERE account = 'claw' AND name = 'claw.clawline.json'", database)


async def approve_on(provider, node) -> dict:
    """The node's `claw` account pairs with the provider (its admin approves it); returns its file."""
    await asyncio.to_thread(wait_account, node, "awaiting_approval", name="claw")
    device = clawline_account(node)["deviceId"]
    await async_wait_for(lambda: pending_on(provider) == [device], timeout=10, what="the pairing request on the provider")
    await asyncio.to_thread(provider.cli, "devices", "approve", device)
    await asyncio.to_thread(wait_account, node, "connected", name="claw")
    issued = clawline_account(node)
    assert issued["deviceId"] == device and issued.get("token"), issued
    return issued


async def test_an_upstream_account_is_held_by_one_node_and_moves_to_a_survivor_when_its_holder_dies(relay_factory, tmp_path):
    up = companion_upstream(relay_factory, tmp_path)
    # A second account, `claw`: a device of another relay's Clawline listener, paired once (its
    # admin approves it); whoever holds the account must present that device and its token.
    provider = relay_factory(make_config(clawline={"listen": "127.0.0.1:0"}))
    await pair_first_admin(provider)
    database = postgres_server.shared().create_database()

    def config(node_id: str) -> dict:
        cfg = node_config(database, node_id)
        cfg["clawline"]["backend"] = "up"
        cfg["backends"].append(dict(up))
        cfg["backends"].append({"name": "claw", "kind": "clawline", "url": provider.ws_url, "device_name": "cluster"})
        return cfg

    first = relay_factory(config("node1"))
    await async_wait_for(lambda: holder_of(first, "up") == "node1", timeout=20, what="node1 holding the account")
    issued = await approve_on(provider, first)
    assert holder_of(first, "claw") == "node1"
    await async_wait_for(lambda: issued["token"] in stored_clawline_account(database), timeout=10, what="the issued token stored")
    second = relay_factory(config("node2"))
    admin, sender = await setup_admin(first)
    device = await pair_and_approve(first, sender, user_id=admin.user_id)
    client, _ = await auth(second, device, name="on node2")
    # Sent through node2, run by node1 (the holder) over its link, answered on node2.
    await client.send_json(message_frame("through the holder"))
    await client.recv_until(is_assistant_final("upstream: through the holder"), timeout=15)
    assert connected_upstream(first, "up") and not connected_upstream(second, "up"), second.stderr_text()[-3000:]
    assert holder_of(second, "up") == "node1"
    await sender.close()

    first.kill()
    # Sent while the holder is dead and not yet declared so: it waits, then runs on node2 once
    # node2 holds the account and its link is up.
    await client.send_json(message_frame("while the holder is gone"))
    await client.recv_until(is_user_echo("while the holder is gone"), timeout=10)
    _, frames = await client.recv_until(is_assistant_final("upstream: while the holder is gone"), timeout=LEASE_SECONDS + 20)
    assert not any(f.get("type") == "error" for f in frames), frames
    assert holder_of(second, "up") == "node2" and connected_upstream(second, "up"), accounts(second)
    await client.send_json(message_frame("on the new holder"))
    await client.recv_until(is_assistant_final("upstream: on the new holder"), timeout=15)
    await client.close()
    # node2 made a device of its own at start; taking `claw` it presents node1's (the same device
    # id and token), so the provider connects it without a new pairing.
    await async_wait_for(lambda: holder_of(second, "claw") == "node2", timeout=20, what="node2's claw link connected")
    taken = clawline_account(second)
    assert (taken["deviceId"], taken["token"]) == (issued["deviceId"], issued["token"]), "the survivor presents the paired device"
    assert pending_on(provider) == [] and connected_upstream(second, "claw"), provider.devices()
    assert "the account's file here differed from the cluster's copy" in second.stderr_text()
    assert issued["token"] not in second.stderr_text() and issued["token"] not in first.stderr_text(), "no credential in a log"
    assert (second.data_dir / "accounts" / "claw.clawline.json").stat().st_mode & 0o777 == 0o600


async def test_a_pairing_is_stored_for_the_cluster_when_the_link_connects_not_at_the_next_heartbeat(relay_factory):
    provider = relay_factory(make_config(clawline={"listen": "127.0.0.1:0"}))
    await pair_first_admin(provider)
    database = postgres_server.shared().create_database()
    cfg = node_config(database, "node1")
    # The first heartbeat (at start) takes the account; the next is 30 s away.
    cfg["cluster"] |= {"heartbeat_seconds": 30, "lease_seconds": 90}
    cfg["backends"].append({"name": "claw", "kind": "clawline", "url": provider.ws_url, "device_name": "cluster"})
    node = relay_factory(cfg)
    issued = await approve_on(provider, node)
    await async_wait_for(lambda: issued["token"] in stored_clawline_account(database), timeout=5, what="the token stored at once")


def test_every_node_presents_one_gateway_identity(relay_factory):
    database = postgres_server.shared().create_database()
    nodes = []
    for index in (1, 2):
        cfg = node_config(database, f"node{index}")
        cfg["gateway"] = {"listen": "127.0.0.1:0"}
        nodes.append(relay_factory(cfg))
    keys = [(node.data_dir / "gateway.key").read_bytes() for node in nodes]
    assert len(keys[0]) == 32 and keys[0] == keys[1], "the second node took the first's identity"
    assert all(((node.data_dir / "gateway.key").stat().st_mode & 0o777) == 0o600 for node in nodes)
    # A node whose data directory held an identity of its own gets the cluster's, and says so.
    third = relay_factory(node_config(database, "node3") | {"gateway": {"listen": "127.0.0.1:0"}}, start=False)
    third.data_dir.mkdir(parents=True, exist_ok=True)
    (third.data_dir / "gateway.key").write_bytes(bytes(range(32)))
    third.start()
    assert (third.data_dir / "gateway.key").read_bytes() == keys[0]
    assert "the gateway.key in this data directory differs from the cluster's" in third.stderr_text()
