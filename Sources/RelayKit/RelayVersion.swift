/// The relay's own version, as `clawrelay --version`, the gateway's `server.version` and
/// `/healthz` report it.
public enum RelayVersion {
    public static let current = "0.4.0"
}
