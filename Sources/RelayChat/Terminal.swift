import CNcurses
import Foundation

/// The screen through ncursesw: raw input bytes (the pure `KeyDecoder` decodes them), window size
/// and resize, and whole-screen redraws of styled rows. Bracketed paste is switched on while the
/// screen is up.
///
/// - Important: one thread only (ncurses is not thread-safe).
public final class Terminal {
    /// What one read returns.
    public enum Input: Equatable {
        case byte(UInt8)
        case resized
        case idle
    }

    /// How a span is drawn; `Terminal` maps each to a colour pair and attributes.
    public enum Style: Int, CaseIterable, Sendable {
        case normal, dim, bold, title, status, active, unread, user, assistant, system, error, marker, input
    }

    /// A run of text in one style; rows are lists of spans.
    public struct Span: Equatable, Sendable {
        public var text: String
        public var style: Style

        public init(_ text: String, _ style: Style = .normal) {
            self.text = text
            self.style = style
        }
    }

    private var isOpen = false

    public init() {}

    /// Takes over the terminal: raw keys, no echo, colours, bracketed paste.
    public func open() {
        setlocale(LC_ALL, "")
        initscr()
        raw()
        noecho()
        nonl()
        relay_curses_keypad_off()
        if has_colors() {
            start_color()
            use_default_colors()
            let pairs: [(Style, Int16, Int16)] = [
                (.title, Int16(COLOR_BLACK), Int16(COLOR_CYAN)), (.status, Int16(COLOR_BLACK), Int16(COLOR_CYAN)),
                (.active, Int16(COLOR_BLACK), Int16(COLOR_YELLOW)), (.unread, Int16(COLOR_YELLOW), -1), (.user, Int16(COLOR_GREEN), -1),
                (.assistant, Int16(COLOR_CYAN), -1), (.system, Int16(COLOR_MAGENTA), -1), (.error, Int16(COLOR_RED), -1),
                (.marker, Int16(COLOR_RED), -1),
            ]
            for (style, foreground, background) in pairs { init_pair(Int16(style.rawValue), foreground, background) }
        }
        FileHandle.standardOutput.write(Data("\u{1B}[?2004h".utf8))
        isOpen = true
    }

    /// Gives the terminal back as it was.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        FileHandle.standardOutput.write(Data("\u{1B}[?2004l".utf8))
        endwin()
    }

    deinit { close() }

    public var rows: Int { Int(relay_curses_lines()) }
    public var columns: Int { Int(relay_curses_cols()) }

    /// One input byte, waiting at most `timeoutMillis`.
    public func read(timeoutMillis: Int) -> Input {
        timeout(Int32(timeoutMillis))
        let value = getch()
        if value == relay_curses_key_resize() { return .resized }
        guard value != relay_curses_err(), (0...255).contains(value) else { return .idle }
        return .byte(UInt8(value))
    }

    /// Spans drawn from a screen position on.
    public struct Placement: Equatable, Sendable {
        public var row: Int
        public var column: Int
        public var spans: [Span]

        public init(row: Int, column: Int, spans: [Span]) {
            self.row = row
            self.column = column
            self.spans = spans
        }
    }

    /// Redraws the whole screen from `placements` and puts the cursor at `cursor`.
    public func draw(_ placements: [Placement], cursor: (row: Int, column: Int)) {
        erase()
        for placement in placements where placement.row < rows && placement.column < columns {
            let spans = placement.spans
            relay_curses_move(Int32(placement.row), Int32(placement.column))
            for span in spans {
                let attributes = Self.attributes(span.style)
                relay_curses_attr_on(attributes)
                _ = span.text.withCString { addstr($0) }
                relay_curses_attr_off(attributes)
            }
        }
        relay_curses_move(Int32(max(0, min(cursor.row, rows - 1))), Int32(max(0, min(cursor.column, columns - 1))))
        refresh()
    }

    public func ring() { beep() }

    private static func attributes(_ style: Style) -> attr_t {
        switch style {
        case .normal, .input: 0
        case .dim: relay_curses_dim()
        case .bold: relay_curses_bold()
        case .title, .status, .active: relay_curses_pair(Int16(style.rawValue)) | relay_curses_bold()
        case .unread, .user, .assistant, .system, .error: relay_curses_pair(Int16(style.rawValue))
        case .marker: relay_curses_pair(Int16(style.rawValue)) | relay_curses_bold()
        }
    }
}
