import RelayCore

extension Relay {
    /// The quantiles `/metrics` gives for each message stage.
    static let stageQuantiles = [0.5, 0.9, 0.99, 0.999]

    /// `/metrics` lines: each stage of a relayed message (`MessageStage`) as a summary in seconds.
    /// The quantiles cover every message since start, read from the core's log buckets (within ~3 %).
    static func stageMetrics(_ stages: StageRecorder, into metrics: inout MetricsText) {
        let series = MessageStage.allCases.map { stage in
            let histogram = stages.histogram(stage)
            let quantiles = stageQuantiles.compactMap { q in histogram.percentile(q * 100).map { (q, Double($0) / 1e9) } }
            return (
                labels: [("stage", stage.label)] as MetricLabels, quantiles: quantiles, sum: Double(histogram.sumNanos) / 1e9,
                count: Double(histogram.count)
            )
        }
        metrics.addSummary(
            "clawrelay_message_stage_seconds",
            "Time relayed messages spent in each stage of their path since start (quantiles from log buckets, within ~3 %).",
            series
        )
    }
}
