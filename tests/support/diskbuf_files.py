# SPDX-License-Identifier: MIT
"""Disk-buffer segment files as a test writes them (the layout is
src/rx/path/diskbuf_format.h, host byte order): a file header and records
of format version 1 (an earlier syslogrx's: a message's listener by its
position), CRCs right, so that what syslogrx does with them is about their
fields, not their checksums."""
import socket
import struct
import zlib

RECV_NS = 1795317120 * 10**9
SIN_LOCALHOST = (struct.pack("=H", socket.AF_INET) + struct.pack("!H", 514)
                 + socket.inet_aton("127.0.0.1"))


def segment_header(version):
    return b"SRXDBUF1" + struct.pack("=II", version, 0)


def v1_record(seq, msgs, src_len=16, listener=0):
    """One version-1 record: msgs as datagrams from 127.0.0.1:514 that came
    by the listener at that position; src_len as stored (forged if not 16)."""
    descs = b"".join(struct.pack("=IIIIQ28sI", len(m), 0, 0, src_len, RECV_NS,
                                 SIN_LOCALHOST.ljust(28, b"\0"), listener) for m in msgs)
    payload = descs + b"".join(msgs)
    hdr = struct.pack("=IIIIIIQQ", 0x52585253, 0, len(payload), len(msgs),
                      zlib.crc32(payload), 0, seq, RECV_NS)
    return hdr[:4] + struct.pack("=I", zlib.crc32(hdr)) + hdr[8:] + payload
