import COpenSSL

/// The server side of a `TLSConnection`: an accepted socket's session, with the
/// certificate and choices of a `TLSServerContext`. Handshake, reads, writes, shutdown and
/// the ciphertext pump are the client's own code; only the start and the SNI differ.
extension TLSConnection {
    /// - Throws: `TLSError.configuration` when OpenSSL cannot make the session.
    public convenience init(server context: TLSServerContext) throws(TLSError) {
        try self.init(session: context.context, serverName: nil)
        SSL_set_accept_state(ssl)
    }

    /// On a server connection, the host name the client asked for in its SNI (RFC 6066
    /// §3), once the ClientHello is in (read it after the handshake); nil when the client
    /// sent none (browsers send none for an IP literal) and on a client connection.
    ///
    /// Outside input: OpenSSL has only checked that it is at most 255 bytes without a NUL
    /// and compares it with nothing. Validate it as a name before using it as one.
    public var requestedServerName: String? {
        guard SSL_is_server(ssl) == 1, let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else {
            return nil
        }
        return String(cString: name)
    }
}
