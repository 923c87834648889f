import Foundation

/// The relay's per-stage latency summaries (`clawrelay_message_stage_seconds`), read back from
/// its `/metrics` text.
struct StageSummary: Equatable, Sendable {
    var stage: String
    var count: Int
    /// Seconds by quantile label ("0.5", "0.99", …); empty when the stage counted nothing.
    var quantiles: [String: Double]

    static let metric = "clawrelay_message_stage_seconds"

    /// Every stage in the order `/metrics` lists them.
    static func parse(_ text: String) -> [StageSummary] {
        var order: [String] = []
        var byStage: [String: StageSummary] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(metric) {
            guard let open = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}"),
                let value = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces))
            else { continue }
            let name = line[..<open]
            let labels = labels(String(line[line.index(after: open)..<close]))
            guard let stage = labels["stage"] else { continue }
            if byStage[stage] == nil {
                order.append(stage)
                byStage[stage] = StageSummary(stage: stage, count: 0, quantiles: [:])
            }
            if name == metric, let quantile = labels["quantile"] {
                byStage[stage]?.quantiles[quantile] = value
            } else if name == metric + "_count" {
                byStage[stage]?.count = Int(value)
            }
        }
        return order.compactMap { byStage[$0] }
    }

    /// `a="x",b="y"` as a dictionary (label values here hold no quotes or commas).
    private static func labels(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            out[String(parts[0])] = String(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }
        return out
    }
}
