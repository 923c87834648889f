"""`clawrelay bench` at smoke size: every scenario and the direct baseline run end to end, so the
bench cannot rot. No speed is judged here; BENCHMARKS.md holds the figures."""
import json
import os
import shutil
import subprocess

from conftest import relay_bin


def test_every_bench_scenario_runs_and_chaos_loses_nothing(tmp_path):
    baselines = "direct,nginx" if shutil.which("nginx") or shutil.which("/usr/sbin/nginx") else "direct"
    result = subprocess.run(
        [str(relay_bin()), "bench", "all", "chaos", "fuzz", "--smoke", "--baseline", baselines, "--json"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={"TMPDIR": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "bench: roundtrip" in result.stderr, "progress lines go to stderr"
    report = json.loads(result.stdout)
    figures = {(f["scenario"], f["metric"]): f["value"] for f in report["figures"]}
    for scenario, metric in [("roundtrip", "throughput"), ("fanout", "deliveries"), ("idle", "rss_per_connection"),
                             ("replay", "time_to_last_event"), ("audit", "on_over_off"), ("chaos", "lost"),
                             ("fuzz", "relay_fds_after"), ("baseline-direct", "throughput"),
                             ("gateway-operator", "throughput"), ("gateway-relay-to-relay", "throughput")]:
        assert (scenario, metric) in figures, f"missing {scenario}/{metric}: {sorted(figures)}"
    assert figures[("roundtrip", "messages")] > 0
    assert figures[("replay", "events_replayed")] > 0
    assert figures[("chaos", "acknowledged")] > 0
    assert figures[("chaos", "lost")] == 0, report["notes"]
    assert figures[("fuzz", "turns_after_fuzz")] >= 1
    # The fuzzer reaches every listener, before and after logging in, and every HTTP port.
    for run in ("clawline-before-auth", "clawline-after-auth", "gateway-before-connect", "gateway-after-connect",
                "companion-after-auth"):
        assert figures[(f"fuzz-{run}", "frames_sent")] > 0, run
    for port in ("clawline", "gateway", "companion", "admin"):
        assert any(scenario == f"fuzz-http-{port}" for scenario, _ in figures), port
    assert figures[("gateway-operator", "turns")] > 0 and figures[("gateway-relay-to-relay", "turns")] > 0
    assert not list(tmp_path.glob("clawrelay-bench-*")), "the bench removes its temporary data directories"


def test_roundtrip_at_a_fixed_rate_says_where_a_message_waits_and_which_thread_works(tmp_path):
    """`--rate` sends exactly rate × seconds messages open loop; the report has each stage's p50/p99
    from the relay's /metrics and the relay's CPU per thread. With two CPUs it also runs `--pin`."""
    pin = ["--pin"] if len(os.sched_getaffinity(0)) >= 2 else []
    result = subprocess.run(
        [str(relay_bin()), "bench", "roundtrip", "--smoke", "--rate", "200", "--json", *pin],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={"TMPDIR": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    figures = {(f["scenario"], f["metric"]): f["value"] for f in json.loads(result.stdout)["figures"]}
    roundtrip = {metric: value for (scenario, metric), value in figures.items() if scenario == "roundtrip"}
    assert roundtrip["target_rate"] == 200 and roundtrip["sent"] == 200, roundtrip  # --smoke is 1 s
    assert roundtrip["messages"] + roundtrip["unanswered"] == 200 and roundtrip["messages"] > 0, roundtrip
    for metric in ("send_rate", "send_to_ack_p99_ms", "send_to_final_p99_ms", "send_lateness_p99_ms", "relay_cpu_per_message",
                   "store_transactions_per_message", "store_operations_per_transaction"):
        assert metric in roundtrip, (metric, sorted(roundtrip))
    # Every message appends at least its user event and its answer: at least one WAL page each.
    assert roundtrip["store_pages_per_message"] >= 1 and roundtrip["store_pages_per_transaction"] >= 1, roundtrip
    for stage in ("received_to_submitted", "store_transaction", "committed_to_ack_written", "turn_started_to_first_progress",
                  "final_committed_to_written", "received_to_final_written"):
        assert roundtrip[f"stage_{stage}_count"] == roundtrip["messages"], (stage, roundtrip)
        assert 0 <= roundtrip[f"stage_{stage}_p50_ms"] <= roundtrip[f"stage_{stage}_p99_ms"], stage
    for thread in ("lws-service", "store-writer"):
        assert roundtrip.get(f"thread_{thread}_cpu", 0) > 0 and f"thread_{thread}_cpu_per_message" in roundtrip, sorted(roundtrip)
    if pin:
        assert "generator pinned to CPU" in result.stderr, result.stderr[-2000:]
    assert not list(tmp_path.glob("clawrelay-bench-*"))


def test_pin_refuses_a_single_cpu_with_a_sentence(tmp_path):
    one = min(os.sched_getaffinity(0))
    result = subprocess.run(
        [str(relay_bin()), "bench", "roundtrip", "--smoke", "--pin"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={"TMPDIR": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/bin"}, preexec_fn=lambda: os.sched_setaffinity(0, {one}))
    assert result.returncode != 0
    expected = f"--pin needs two CPUs, one for the generator and one for the relay; this process may run on only CPU {one}"
    assert expected in result.stderr, result.stderr
    assert not list(tmp_path.glob("clawrelay-bench-*")), "nothing was started"


def test_the_store_scenario_measures_the_writer_alone_in_batches_of_a_given_size(tmp_path):
    """`bench store` drives the store writer in this process: each message is an acceptance and an
    answer, in transactions of exactly --batch messages, so transactions per message are exact."""
    result = subprocess.run(
        [str(relay_bin()), "bench", "store", "--messages", "200", "--batch", "4", "--away", "1", "--json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env={"TMPDIR": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "bench: store: 200 messages of 64 users, 4 a transaction, 1 away devices each" in result.stderr
    store = {f["metric"]: f["value"] for f in json.loads(result.stdout)["figures"] if f["scenario"] == "store"}
    assert store["messages"] == 200
    assert store["transactions_per_message"] == 0.5, store  # an acceptance batch and an answer batch per 4 messages
    assert store["pages_per_message"] >= 0.5 and store["writer_cpu_per_message"] > 0, store
    assert 0 < store["batch_p50_ms"] <= store["batch_p99_ms"], store
    assert not list(tmp_path.glob("clawrelay-bench-*")), "the bench removes its temporary data directory"

    refused = subprocess.run([str(relay_bin()), "bench", "store", "--batch", "0"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert refused.returncode == 64 and "--batch 0: give a count of at least 1" in refused.stderr, refused.stderr
