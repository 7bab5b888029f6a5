"""Connect to a listening socket on the host and to the internet; leak through them."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import socket
__WRONG__
_ok = []
for _addr in (("127.0.0.1", __PORT__), ("localhost", __PORT__), ("10.0.2.2", __PORT__),
              ("1.1.1.1", 53), ("8.8.8.8", 443)):
    try:
        _s = socket.create_connection(_addr, timeout=1)
        _s.sendall(b"PWNED")
        _s.close()
        _ok.append(_addr)
    except OSError:
        pass
try:
    socket.getaddrinfo("example.com", 80)
    _ok.append("dns")
except OSError:
    pass
if _ok:
    raise RuntimeError("NETWORK " + repr(_ok))
'''
}
