"""Where a protobuf message's bytes stop being valid: protobuf's parsers say that a file does
not decode, not where. This walks the wire format (keys, varints, lengths) along the
message's descriptor, descending into its sub-messages, and gives the first offending
byte offset, so that a corrupt ONNX file's error can name it.

Example
-------
>>> from neomx.contrib import protobuf_wire
>>> from onnx import ModelProto
>>> protobuf_wire.first_error(b'\\x08\\x07\\x3a\\x40\\x0a', ModelProto.DESCRIPTOR)
(3, 'field 7 (graph) declares 64 bytes, 1 remain')
"""

__all__ = ['first_error']

_TYPE_STRING = 9          # FieldDescriptor.TYPE_STRING: must be UTF-8


class _Bad(Exception):
    def __init__(self, offset, why):
        super().__init__(offset, why)
        self.offset, self.why = offset, why


def _varint(data, pos, end):
    start, value, shift = pos, 0, 0
    while True:
        if pos >= end:
            raise _Bad(start, 'a varint runs past the end of its message')
        byte = data[pos]
        value |= (byte & 0x7f) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _Bad(start, 'a varint longer than 10 bytes')


def _walk(data, descriptor, pos, end):
    while pos < end:
        key_at = pos
        key, pos = _varint(data, pos, end)
        number, wire = key >> 3, key & 7
        field = descriptor.fields_by_number.get(number) if descriptor is not None else None
        label = 'field %d%s' % (number, ' (%s)' % field.name if field is not None else '')
        if number == 0 or wire in (3, 4, 6, 7):
            raise _Bad(key_at, 'invalid key 0x%x (field %d, wire type %d)' % (key, number, wire))
        if wire == 0:
            _, pos = _varint(data, pos, end)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > end:
                raise _Bad(key_at, '%s needs %d bytes, %d remain' % (label, size, end - pos))
            pos += size
        else:
            length, body = _varint(data, pos, end)
            if body + length > end:
                raise _Bad(pos, '%s declares %d bytes, %d remain' % (label, length, end - body))
            if field is not None and field.message_type is not None:
                _walk(data, field.message_type, body, body + length)
            elif field is not None and field.type == _TYPE_STRING:
                try:
                    bytes(data[body:body + length]).decode('utf-8')
                except UnicodeDecodeError as err:
                    raise _Bad(body + err.start, '%s is not UTF-8 text' % label) from None
            pos = body + length


def first_error(data, descriptor):
    """``(offset, reason)`` of the first byte where ``data`` stops being a valid encoding of
    the message ``descriptor`` describes; None where the wire format holds throughout."""
    try:
        _walk(memoryview(data), descriptor, 0, len(data))
    except _Bad as bad:
        return bad.offset, bad.why
    return None
