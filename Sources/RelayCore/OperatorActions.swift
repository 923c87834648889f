/// What the operator CLI can ask of a bridge, through the running relay.
///
/// - Important: called on the loop thread.
public protocol OperatorActions: AnyObject {
    /// Approves or denies this bridge's pending pairing request for `deviceID`; false when it has none.
    func resolvePending(deviceID: String, approve: Bool, userID: String?, completion: @escaping (String) -> Void) -> Bool
    /// Closes the device's live sockets and stops its work (after a revoke or a denylisting).
    func cutOff(deviceID: String)
    /// The device's record changed (e.g. its admin flag): live sockets follow it.
    func refresh(deviceID: String)
}

extension OperatorActions {
    public func refresh(deviceID: String) {}
}
