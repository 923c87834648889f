internal import CLibWebSockets
import Foundation

/// Receives the events of a WebSocket this process opened.
///
/// - Important: called on the service thread.
public protocol ClientHandler: AnyObject {
    func clientConnected(_ connection: WebSocketConnection)
    func client(_ connection: WebSocketConnection, received message: WebSocketMessage)
    /// The socket closed, or (with `error`, and `connection` nil) never opened.
    func clientClosed(_ connection: WebSocketConnection?, error: String?)
}

extension ClientHandler {
    public func clientClosed(_ connection: WebSocketConnection, error: String?) {
        clientClosed(Optional(connection), error: error)
    }
}

extension ServiceLoop {
    static let clientVhostName = "client"

    /// Where a client connection goes.
    public struct ClientTarget: Sendable {
        public var host: String
        public var port: Int
        public var path: String
        public var tls: Bool
        /// Accept a certificate the system does not trust (tests, loopback).
        public var allowSelfSigned: Bool
        public var maxMessageBytes: Int

        public init(host: String, port: Int, path: String = "/", tls: Bool = false, allowSelfSigned: Bool = false, maxMessageBytes: Int = 16 << 20) {
            self.host = host
            self.port = port
            self.path = path
            self.tls = tls
            self.allowSelfSigned = allowSelfSigned
            self.maxMessageBytes = maxMessageBytes
        }
    }

    /// Opens a WebSocket to `target`; the handler hears `clientConnected` or `clientClosed(nil, error:)`.
    /// Loop thread only.
    public func connect(to target: ClientTarget, handler: ClientHandler) {
        precondition(isOnLoop)
        guard let context = currentContext, let vhost = clientVhost else {
            return handler.clientClosed(nil, error: "the service loop is not running")
        }
        let token = nextClientToken()
        pendingClients[token] = PendingClient(target: target, handler: handler)
        var info = lws_client_connect_info()
        info.context = context
        info.vhost = vhost
        info.port = Int32(target.port)
        info.userdata = UnsafeMutableRawPointer(bitPattern: UInt(token))
        var flags: Int32 = 0
        if target.tls {
            flags |= Int32(LCCSCF_USE_SSL.rawValue)
            if target.allowSelfSigned { flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue) }
        }
        info.ssl_connection = flags
        let hostHeader = target.port == (target.tls ? 443 : 80) ? target.host : "\(target.host):\(target.port)"
        let result = target.host.withCString { address in
            target.path.withCString { path in
                hostHeader.withCString { host in
                    info.address = address
                    info.path = path
                    info.host = host
                    info.origin = host
                    return lws_client_connect_via_info(&info)
                }
            }
        }
        if result == nil, let pending = pendingClients.removeValue(forKey: token) {
            pending.handler?.clientClosed(nil, error: "cannot connect to \(target.host):\(target.port)")
        }
        pendingClients[token]?.wsi = result
    }

    func clientEstablished(_ wsi: OpaquePointer) -> Int32 {
        let token = UInt64(UInt(bitPattern: lws_wsi_user(wsi)))
        guard let pending = pendingClients.removeValue(forKey: token), let handler = pending.handler else { return -1 }
        let connection = WebSocketConnection(
            id: newConnectionID(for: wsi),
            wsi: wsi,
            listener: Self.clientVhostName,
            path: pending.target.path,
            peerAddress: "\(pending.target.host):\(pending.target.port)",
            io: self,
            maxMessageBytes: pending.target.maxMessageBytes,
            clientHandler: handler
        )
        webSockets[wsi] = connection
        handler.clientConnected(connection)
        return 0
    }

    /// lws dropped a connection before its handshake finished without reporting an error (a server
    /// that took the TCP connection and never answered, once lws's timeout ran out): its handler
    /// hears it like any failed connection, or it would wait for ever.
    func clientVanished(_ wsi: OpaquePointer) {
        let token = UInt64(UInt(bitPattern: lws_wsi_user(wsi)))
        guard token != 0, let pending = pendingClients[token], pending.wsi == wsi else { return }
        pendingClients.removeValue(forKey: token)
        pending.handler?.clientClosed(nil, error: "\(pending.target.host):\(pending.target.port) did not complete the WebSocket handshake")
    }

    func clientFailed(_ wsi: OpaquePointer, reason: String) {
        let token = UInt64(UInt(bitPattern: lws_wsi_user(wsi)))
        if let pending = pendingClients.removeValue(forKey: token) {
            pending.handler?.clientClosed(nil, error: reason)
        } else if webSockets[wsi] != nil {
            webSocketClosedByError(wsi, reason: reason)
        }
    }
}

extension ServiceLoop.ClientTarget {
    /// The same server with `token` in the query (`/ws?token=…`): how the Companion and DiscoClaw
    /// apps authenticate their sockets. The path then holds a secret: never log or audit it.
    public func withToken(_ token: String) -> ServiceLoop.ClientTarget {
        var target = self
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = token.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        target.path += (path.contains("?") ? "&" : "?") + "token=" + encoded
        return target
    }
}

struct PendingClient {
    let target: ServiceLoop.ClientTarget
    weak var handler: ClientHandler?
    /// Set once lws has made the connection's wsi.
    var wsi: OpaquePointer?
}
