import Foundation

/// A daily window (in a time zone) during which pushes wait: `22:00-07:00` holds a push made at
/// 23:30 until 07:00. A window whose end is before its start runs over midnight.
public struct QuietHours: Sendable, Equatable {
    public var startMinute: Int
    public var endMinute: Int
    public var timeZone: TimeZone

    /// Parses `HH:MM-HH:MM` (24-hour); nil when malformed or empty (start == end).
    public init?(_ text: String, timeZone: TimeZone) {
        let parts = text.split(separator: "-").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let start = Self.minute(parts[0]), let end = Self.minute(parts[1]), start != end else { return nil }
        startMinute = start
        endMinute = end
        self.timeZone = timeZone
    }

    private static func minute(_ text: String) -> Int? {
        let fields = text.split(separator: ":")
        guard fields.count == 2, fields.allSatisfy({ $0.count == 2 }), let hour = Int(fields[0]), let minute = Int(fields[1]),
            (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    /// True when `millis` falls in the window.
    public func contains(_ millis: Int64) -> Bool { minutesLeft(at: millis) != nil }

    /// `millis` itself outside the window, else the window's end.
    public func release(_ millis: Int64) -> Int64 {
        guard let left = minutesLeft(at: millis) else { return millis }
        let local = localMillis(millis)
        let minuteStart = millis - local % 60_000
        return minuteStart + Int64(left) * 60_000
    }

    /// Whole minutes from the start of `millis`'s minute to the window's end, nil outside it.
    private func minutesLeft(at millis: Int64) -> Int? {
        let minute = Int((localMillis(millis) / 60_000) % 1_440)
        let inside = startMinute < endMinute ? (startMinute..<endMinute).contains(minute) : (minute >= startMinute || minute < endMinute)
        guard inside else { return nil }
        return (endMinute - minute + 1_440) % 1_440
    }

    private func localMillis(_ millis: Int64) -> Int64 {
        let offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(millis) / 1000))) * 1000
        let local = millis + offset
        return local >= 0 ? local : local + 86_400_000 * 400
    }
}
