/// Settings of the client model, fixed at start.
public struct ChatConfiguration: Sendable {
    /// The backend `/new` and the first conversation use; the server's default (``ServerEvent/backendsListed(names:defaultBackend:)``) otherwise.
    public var defaultBackend: String?
    /// How many messages a buffer loads when entered.
    public var historyLimit: Int
    /// For the `HH:MM` timestamps.
    public var utcOffsetSeconds: Int
    /// Client ids of sent messages are `<prefix>-<n>`: give each run its own prefix (a UUID).
    public var clientIDPrefix: String
    /// Whether activity in another buffer asks for ``ChatEffect/bell``.
    public var bellOnActivity: Bool
    /// Unix milliseconds now; injected so tests control time.
    public var now: @Sendable () -> Int64

    public init(
        defaultBackend: String? = nil,
        historyLimit: Int = 200,
        utcOffsetSeconds: Int = 0,
        clientIDPrefix: String = "tui",
        bellOnActivity: Bool = true,
        now: @escaping @Sendable () -> Int64
    ) {
        self.defaultBackend = defaultBackend
        self.historyLimit = max(1, min(Command.maxHistoryLimit, historyLimit))
        self.utcOffsetSeconds = utcOffsetSeconds
        self.clientIDPrefix = clientIDPrefix
        self.bellOnActivity = bellOnActivity
        self.now = now
    }
}

/// The whole client, as a state machine: ``handle(_:)`` takes one ``ChatInput`` and returns the
/// ``ChatEffect``s to perform; ``screen()`` says what to draw. No terminal, no network, no clock of
/// its own.
///
/// - Important: Call ``handle(_:)`` from one place only (it is a value). Send ``ChatInput/resize(columns:rows:)``
///   before relying on reading: a message counts as read only once the active buffer shows its newest line
///   on a screen of known size.
public struct ChatState: Sendable {
    public let configuration: ChatConfiguration
    public internal(set) var buffers = BufferList()
    public internal(set) var activeKey: String?
    public internal(set) var hotlist = Hotlist()
    public internal(set) var connection = ConnectionState.connecting
    /// Backend names, as last listed.
    public internal(set) var backends: [String] = []
    /// Tool uses waiting for the user's decision, oldest first (see `ChatState+Approvals.swift`).
    public internal(set) var approvals: [PendingApproval] = []
    public internal(set) var serverDefaultBackend: String?
    public internal(set) var killRing = KillRing()
    /// Set while Ctrl-R searches the active buffer.
    public internal(set) var search: SearchState?
    /// A one-line message for the status line (command errors, hints); cleared by the next key.
    public internal(set) var notice: String?
    /// The terminal's size, once known.
    public internal(set) var terminalSize: (columns: Int, rows: Int)?
    /// Digits typed after Alt-J.
    var jumpDigits: String?
    /// Where the first Alt-A came from, to go back when the hotlist is empty.
    var hotlistOrigin: String?
    var listedOnce = false
    var waitingForDefaultBackend = false
    var wasConnected = false
    var sentCount = 0
    /// The input line while no buffer is open.
    var detachedEditor = LineEditor()
    var effects: [ChatEffect] = []
    var needsRedraw = false

    public init(configuration: ChatConfiguration) {
        self.configuration = configuration
    }

    public var activeBuffer: ChatBuffer? { activeKey.flatMap { buffers[$0] } }

    /// The backend `/new` uses when none is named.
    public var defaultBackend: String? { configuration.defaultBackend ?? serverDefaultBackend ?? backends.first }

    /// Applies one input; returns what to do, in order (``ChatEffect/redraw`` last, at most once).
    public mutating func handle(_ input: ChatInput) -> [ChatEffect] {
        effects = []
        needsRedraw = false
        switch input {
        case .key(let key):
            handleKey(key)
        case .resize(let columns, let rows):
            terminalSize = (max(1, columns), max(0, rows))
            needsRedraw = true
        case .server(let event):
            handleServer(event)
        }
        markActiveRead()
        if needsRedraw { effects.append(.redraw) }
        return effects
    }

    /// The input line of the active buffer (or the one used while there is none).
    public var editor: LineEditor { activeBuffer?.editor ?? detachedEditor }

    mutating func withEditor<Result>(_ body: (inout LineEditor) -> Result) -> Result {
        if let key = activeKey, let result = buffers.update(key, { body(&$0.editor) }) { return result }
        return body(&detachedEditor)
    }

    mutating func show(notice text: String) {
        notice = text
        needsRedraw = true
    }

    /// Adds a client-made line to the active buffer, or shows it as a notice when there is none.
    mutating func say(_ text: String, role: ChatRole = .system) {
        guard let key = activeKey else { return show(notice: text) }
        let now = configuration.now()
        preservingScroll(of: key) { $0.transcript.appendLocal(role: role, text: text, timestamp: now) }
        needsRedraw = true
    }

    /// Makes `key` the active buffer. The buffer left keeps a marker after its last line; the one
    /// entered leaves the hotlist, shows its newest line and loads its history if it has none.
    mutating func activate(_ key: String?, keepingHotlistOrigin: Bool = false) {
        if !keepingHotlistOrigin { hotlistOrigin = nil }
        guard let key, key != activeKey, buffers[key] != nil else { return }
        if let current = activeKey { buffers.update(current) { $0.moveMarkerToEnd() } }
        // Text typed while no buffer was open (the first one is still being made) goes with it.
        if activeKey == nil, !detachedEditor.isEmpty, buffers[key]?.editor.isEmpty == true {
            let draft = detachedEditor
            buffers.update(key) { $0.editor = draft }
            detachedEditor = LineEditor()
        }
        search = nil
        activeKey = key
        hotlist.remove(key)
        buffers.update(key) { $0.scrollOffset = 0 }
        if let buffer = buffers[key], buffer.historyState == .notLoaded || buffer.historyState == .stale {
            requestHistory(of: key, limit: max(configuration.historyLimit, buffer.historyLimit))
        }
        needsRedraw = true
    }

    mutating func requestHistory(of key: String, limit: Int) {
        let limit = max(1, min(Command.maxHistoryLimit, limit))
        buffers.update(key) {
            $0.historyState = .loading
            $0.historyLimit = limit
        }
        effects.append(.fetchHistory(key: key, limit: limit))
    }
}
