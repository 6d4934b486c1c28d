"""A static file server on 127.0.0.1 that answers HTTP Range requests (for URL tests).

Python's ``http.server`` serves whole files only; fsspec's http file system reads a file
in ranges, as object stores serve them. ``serve(folder)`` starts a server thread and
returns (base URL, stop function).
"""
import http.server
import os
import re
import threading

_RANGE = re.compile(r'bytes=(\d+)-(\d*)$')


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def _file(self):
        path = self.translate_path(self.path)
        return path if os.path.isfile(path) else None

    def do_HEAD(self):
        self._answer(send_body=False)

    def do_GET(self):
        self._answer(send_body=True)

    def _answer(self, send_body):
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        size = os.path.getsize(path)
        begin, end = 0, size - 1
        match = _RANGE.match(self.headers.get('Range', ''))
        if match:
            begin = int(match.group(1))
            end = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
            if begin >= size:
                self.send_response(416)
                self.send_header('Content-Range', 'bytes */%d' % size)
                self.send_header('Content-Length', '0')
                self.end_headers()
                return
            self.send_response(206)
            self.send_header('Content-Range', 'bytes %d-%d/%d' % (begin, end, size))
        else:
            self.send_response(200)
        self.send_header('Accept-Ranges', 'bytes')
        self.send_header('Content-Type', 'application/octet-stream')
        self.send_header('Content-Length', str(end - begin + 1))
        self.end_headers()
        if send_body:
            with open(path, 'rb') as f:
                f.seek(begin)
                _copy(f, self.wfile, end - begin + 1)


def _copy(source, target, count):
    while count > 0:
        chunk = source.read(min(count, 1 << 20))
        if not chunk:
            return
        target.write(chunk)
        count -= len(chunk)


def serve(folder):
    """Serve ``folder`` on a free port of 127.0.0.1; returns (base URL, stop)."""
    handler = lambda *args, **kwargs: _RangeHandler(*args, directory=folder, **kwargs)  # noqa: E731
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()
        thread.join()
    return 'http://127.0.0.1:%d' % server.server_address[1], stop


if __name__ == '__main__':
    # python tests/http_range_server.py FOLDER: serve until killed; prints the base URL
    import sys
    import time
    url, _ = serve(sys.argv[1])
    print(url, flush=True)
    while True:
        time.sleep(3600)
