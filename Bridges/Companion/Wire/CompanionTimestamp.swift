/// The protocol's timestamps: ISO 8601 in UTC with milliseconds, `2026-11-22T10:00:00.123Z`, what
/// JavaScript's `toISOString()` writes and the app parses (it takes at most 3 fractional digits).
public enum CompanionTimestamp {
    /// The timestamp of `millis` since 1970, written without Foundation or a formatter: every
    /// server frame carries one.
    public static func string(_ millis: Int64) -> String {
        var days = millis / 86_400_000
        var time = millis % 86_400_000
        if time < 0 {
            time += 86_400_000
            days -= 1
        }
        let (year, month, day) = civilDate(daysSince1970: days)
        guard (0...9999).contains(year) else { return wide(year: year, month: month, day: day, time: time) }
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var index = 0
            func put(_ value: Int64, digits: Int) {
                var divisor: Int64 = 1
                for _ in 1..<digits { divisor *= 10 }
                while divisor > 0 {
                    buffer[index] = UInt8(truncatingIfNeeded: 48 + (value / divisor) % 10)
                    index += 1
                    divisor /= 10
                }
            }
            func put(_ byte: Character) {
                buffer[index] = byte.asciiValue ?? 0
                index += 1
            }
            put(year, digits: 4)
            put("-")
            put(month, digits: 2)
            put("-")
            put(day, digits: 2)
            put("T")
            put(time / 3_600_000, digits: 2)
            put(":")
            put(time / 60_000 % 60, digits: 2)
            put(":")
            put(time / 1000 % 60, digits: 2)
            put(".")
            put(time % 1000, digits: 3)
            put("Z")
            return index
        }
    }

    /// Years before 0 or after 9999, as `%04d` writes them (never seen on the wire).
    private static func wide(year: Int64, month: Int64, day: Int64, time: Int64) -> String {
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let yearText = year < 0 ? "-" + padded(-year, 3) : padded(year, 4)
        return yearText + "-" + padded(month, 2) + "-" + padded(day, 2) + "T" + padded(time / 3_600_000, 2) + ":"
            + padded(time / 60_000 % 60, 2) + ":" + padded(time / 1000 % 60, 2) + "." + padded(time % 1000, 3) + "Z"
    }

    /// The proleptic Gregorian date of a day number (Howard Hinnant's `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
