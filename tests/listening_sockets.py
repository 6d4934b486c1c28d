"""The TCP sockets a process tree listens on, read from Linux's /proc (no psutil needed)."""
import ipaddress
import os
import socket

__all__ = ['process_tree', 'listening_addresses', 'is_loopback']


def process_tree(root):
    """``root`` and all its descendants' pids (those alive now)."""
    children = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
        except OSError:             # gone meanwhile
            continue
        ppid = int(stat[stat.rindex(')') + 2:].split()[1])     # the name may hold spaces
        children.setdefault(ppid, []).append(int(entry))
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, ()))
    return found


def _socket_inodes(pid):
    inodes = set()
    try:
        fds = os.listdir('/proc/%d/fd' % pid)
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink('/proc/%d/fd/%s' % (pid, fd))
        except OSError:
            continue
        if target.startswith('socket:['):
            inodes.add(target[len('socket:['):-1])
    return inodes


def _address(field):
    """``0100007F:8EEB`` (/proc/net/tcp's little-endian words) -> ('127.0.0.1', 36587)."""
    hex_ip, hex_port = field.split(':')
    raw = bytes.fromhex(hex_ip)
    raw = b''.join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, raw), int(hex_port, 16)


def listening_addresses(pids):
    """``{(address, port)}`` of the TCP sockets of ``pids`` in the LISTEN state."""
    inodes = set()
    for pid in pids:
        inodes |= _socket_inodes(pid)
    found = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == '0A' and fields[9] in inodes:      # 0A: LISTEN
                    found.add(_address(fields[1]))
    return found


def is_loopback(address):
    """127.0.0.0/8, ::1, or an IPv4 loopback address mapped into IPv6."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback
