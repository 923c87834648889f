import RelayKit

/// What opens client sockets and runs their timers: the service loop in the relay.
public protocol ClientConnector: LoopScheduler {
    func connect(to target: ServiceLoop.ClientTarget, handler: ClientHandler)
}

extension ServiceLoop: ClientConnector {}
