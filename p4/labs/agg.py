#!/usr/bin/env python3
"""Send and receive the aggregation packets of grid's labs 2 and 3.

    agg.py send PS FRAGMENT FANIN V0 V1 V2 V3 [--resend]   (on a worker)
    agg.py receive                                             (on the PS)

A fragment is a UDP datagram to port 9999: job (16 bits), fanin (8), flags
(8), fragment id (32) and four int32 values, in network byte order.
"""
import socket
import struct
import sys

PORT = 9999
FLAGS = {0x80: "RESULT", 0x40: "PASSED", 0x20: "RESEND", 0x10: "PARTIAL"}


def send(ps, fragment, fanin, values, resend):
    flags = 0x20 if resend else 0
    payload = struct.pack("!HBBI4i", 1, fanin, flags, fragment, *values)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(payload, (ps, PORT))
    print("sent fragment %d (fanin %d) %s" % (fragment, fanin, values))


def receive():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", PORT))
        while True:
            data, addr = s.recvfrom(2048)
            job, fanin, flags, fragment, *values = struct.unpack("!HBBI4i", data[:24])
            kind = FLAGS.get(flags, "a worker's fragment")
            print("from %s: fragment %d fanin %d %s %s" % (addr[0], fragment, fanin, kind, values), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["receive"]:
        receive()
    elif args[:1] == ["send"] and len(args) in (8, 9):
        send(args[1], int(args[2]), int(args[3]), [int(v) for v in args[4:8]], args[8:] == ["--resend"])
    else:
        sys.exit(__doc__)
