"""`clawrelay bench` at smoke size: every scenario and the direct baseline run end to end, so the
bench cannot rot. No speed is judged here; BENCHMARKS.md holds the figures."""
import json
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
