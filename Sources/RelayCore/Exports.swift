// The utilities every part of the core uses (JSON, ids, clocks and loops, backoff, tokens,
// redaction) live in RelayKit so that wire modules, the transport and the clients can use them
// without the core; a module that imports RelayCore sees them too, as Hummingbird re-exports
// HummingbirdCore.
@_exported import RelayKit
