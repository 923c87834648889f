/// The stem of the files an upstream account (or an identity) keeps in its folder:
/// `<folder>/<name>.key`, `<folder>/<name>.clawline.json`, ...
public enum AccountFileName {
    /// Why `name` cannot be such a stem, or nil when it can. It must stay inside its folder and be
    /// visible there: not empty, no `/` or NUL, and no leading `.` (so neither `.` nor `..`).
    ///
    /// - Important: the config already allows only letters, digits, `-`, `_` and `.` in a backend
    ///   name; this is the second guard, at the place where the name becomes a path.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.contains("/") || name.contains("\0") { return "holds a / or a NUL" }
        if name.hasPrefix(".") { return "starts with ." }
        return nil
    }
}
