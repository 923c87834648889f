/// A sample's labels, in the order they are written.
typealias MetricLabels = [(name: String, value: String)]

/// Prometheus text exposition (format 0.0.4), built by hand: a few dozen gauges and counters read
/// on the loop need no registry. Label values and help texts are escaped as the format asks.
struct MetricsText {
    private(set) var text = ""

    mutating func add(_ name: String, _ type: String, _ help: String, _ samples: [(labels: MetricLabels, value: Double)]) {
        header(name, type, help)
        for sample in samples { line(name, sample.labels, Self.format(sample.value)) }
    }

    mutating func add(_ name: String, _ type: String, _ help: String, _ value: Double) {
        add(name, type, help, [([], value)])
    }

    /// A summary: per series, its quantiles (left out while it has no samples), `_sum` and `_count`.
    mutating func addSummary(
        _ name: String,
        _ help: String,
        _ series: [(labels: MetricLabels, quantiles: [(Double, Double)], sum: Double, count: Double)]
    ) {
        header(name, "summary", help)
        for one in series {
            for (quantile, value) in one.quantiles { line(name, one.labels + [("quantile", "\(quantile)")], "\(value)") }
            line(name + "_sum", one.labels, "\(one.sum)")
            line(name + "_count", one.labels, "\(Int64(one.count))")
        }
    }

    private mutating func header(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
    }

    private mutating func line(_ name: String, _ labels: MetricLabels, _ value: String) {
        text += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(Self.labels(labels))} \(value)\n"
    }

    /// `a="x",b="y"`, each value escaped.
    static func labels(_ labels: MetricLabels) -> String {
        labels.map { "\($0.name)=\"\(escapeLabel($0.value))\"" }.joined(separator: ",")
    }

    /// A label value as the text format writes it: backslash, double quote and line feed escaped.
    static func escapeLabel(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// A help text: backslash and line feed escaped.
    static func escapeHelp(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func format(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
