"""Listening sockets bound to one address: what neomx's TCPStore servers (the launcher's
rendezvous, a job's store) listen on, instead of torch's default of every interface."""
import socket

__all__ = ['bound_listener']


def bound_listener(host, port):
    """The file descriptor of a socket listening on ``host``'s address at ``port`` (0: any free
    port) and the port, for ``TCPStore(master_listen_fd=...)``, which takes it over; None when
    ``host`` is not an address of this machine (a Kubernetes service address: the store then
    listens on every interface, as torch's does)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(1024)
        except OSError:
            sock.close()
            continue
        bound_port = sock.getsockname()[1]
        return sock.detach(), bound_port
    return None
