// The byte buffer lives in the pure `Bytes` module, below this one, so that I/O-free code
// (the proxy's state machines in ProxyCore) can hold the buffers the sockets here read
// into without linking sockets. Re-exported: whoever uses the loop's sockets gets the
// buffer type with them, as before it moved.
@_exported import Bytes
