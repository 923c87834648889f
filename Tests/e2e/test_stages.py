"""Where a message waits: the admin `/metrics` has a summary per stage of a relayed message's path
(frame received → submitted → committed → ack written / turn started → first progress → final →
final committed → final written to the last device), and each Clawline message relayed through
the echo backend is counted once in every stage, however many devices take its answer."""

from conftest import auth, is_assistant_final, message_frame, new_client_id, pair_and_approve, send_and_complete, setup_admin

METRIC = "clawrelay_message_stage_seconds"
# The path from the frame to the last device, in order: these stretches add up to the whole.
CHAIN = ["received_to_submitted", "submitted_to_committed", "committed_to_turn_started", "turn_started_to_first_progress",
         "first_progress_to_final", "final_to_committed", "final_committed_to_written"]
STORE = {"submitted_to_committed": ["store_queue", "store_transaction", "store_return"],
         "final_to_committed": ["final_store_queue", "final_store_transaction", "final_store_return"]}
STAGES = CHAIN + [part for parts in STORE.values() for part in parts] + ["committed_to_ack_written", "received_to_final_written"]


def stage_summaries(relay) -> tuple[str, dict[str, dict]]:
    """The /metrics text and, per stage, its quantiles (seconds by quantile), `sum` and `count`."""
    text = relay.http("GET", "/metrics", admin=True).body.decode()
    stages: dict[str, dict] = {}
    for line in text.splitlines():
        if not line.startswith(METRIC):
            continue
        name, rest = line.split("{", 1)
        labels, value = rest.rsplit("} ", 1)
        fields = {key: raw.strip('"') for key, raw in (part.split("=", 1) for part in labels.split(","))}
        entry = stages.setdefault(fields["stage"], {"quantiles": {}})
        if name == METRIC:
            entry["quantiles"][fields["quantile"]] = float(value)
        else:
            entry[name[len(METRIC) + 1:]] = float(value)
    return text, stages


def test_every_stage_is_a_summary_and_counts_nothing_before_a_message(relay):
    text, stages = stage_summaries(relay)
    assert f"# TYPE {METRIC} summary" in text, text[:2000]
    assert sorted(stages) == sorted(STAGES), sorted(stages)
    for stage, entry in stages.items():
        assert entry["count"] == 0 and entry["sum"] == 0 and entry["quantiles"] == {}, (stage, entry)


async def test_each_relayed_message_is_counted_once_per_stage_and_the_stretches_add_up(relay_factory):
    relay = relay_factory(clawline={"messages_per_second": 100})
    admin, client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, client, user_id=admin.user_id, name="Sibling")
    sibling_client, _ = await auth(relay, sibling)
    sent = 5
    cids = [new_client_id() for _ in range(sent)]
    for index, cid in enumerate(cids):
        exchange = await send_and_complete(client, f"stage {index}", cid)
        await sibling_client.recv_until(is_assistant_final(msg_id=exchange.final["id"]))
    # A retry is acknowledged again but is no new message.
    await client.send_json(message_frame("stage 0", cids[0]))
    await client.recv_until(lambda f: f.get("type") == "ack" and f.get("id") == cids[0])

    _, stages = stage_summaries(relay)
    counts = {stage: stages[stage]["count"] for stage in STAGES}
    assert counts == {stage: sent for stage in STAGES}, counts
    for stage in STAGES:
        quantiles = stages[stage]["quantiles"]
        values = [quantiles[q] for q in ("0.5", "0.9", "0.99", "0.999")]
        assert all(v >= 0 for v in values) and values == sorted(values), (stage, quantiles)
    # The stamps are shared between neighbouring stages, so the stretches add up exactly.
    total = stages["received_to_final_written"]["sum"]
    assert total > 0
    assert abs(sum(stages[stage]["sum"] for stage in CHAIN) - total) < 1e-6, {s: stages[s]["sum"] for s in CHAIN}
    for whole, parts in STORE.items():
        assert abs(sum(stages[part]["sum"] for part in parts) - stages[whole]["sum"]) < 1e-6, (whole, parts)


async def test_the_store_writer_counts_its_transactions_pages_and_cpu(relay):
    """The writer's counters move with a relayed message: transactions, operations, WAL pages, and
    its thread's CPU, which is part of (never more than) the time it spent in transactions."""
    def counters():
        text = relay.http("GET", "/metrics", admin=True).body.decode()
        return {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines()
                if line.startswith("clawrelay_store_") and " " in line and not line.startswith("#")}
    before = counters()
    _, client = await setup_admin(relay)
    await send_and_complete(client, "count me", new_client_id())
    after = counters()
    for name in ("clawrelay_store_batches_total", "clawrelay_store_operations_total", "clawrelay_store_wal_pages_total",
                 "clawrelay_store_cpu_seconds_total", "clawrelay_store_busy_seconds_total"):
        assert after[name] > before.get(name, 0), (name, before, after)
    assert after["clawrelay_store_cpu_seconds_total"] <= after["clawrelay_store_busy_seconds_total"] + 0.01, after
    # The checkpoints the writer runs between its transactions are counted too.
    for name in ("clawrelay_store_checkpoint_seconds_total", "clawrelay_store_checkpoint_max_seconds",
                 "clawrelay_store_checkpoints_skipped_total", "clawrelay_store_log_pages_max"):
        assert after[name] >= 0, (name, after)
    assert after["clawrelay_store_checkpoint_max_seconds"] <= after["clawrelay_store_checkpoint_seconds_total"], after
