#!/usr/bin/env python3
"""Writes the hand-made seeds of the remote protocol's fuzz targets (issue 31):
tests/fuzz/corpus/remote_client/ (what a peer says to Orrery) and
tests/fuzz/corpus/remote_peer/ (what a client says to `orrery peer`).

Each seed is a stream of frames: a 4-byte little-endian length, then a
FromPeer or ToPeer (plugins/remote/remote.proto). The valid streams are the
conversation of the remote_client target's run (a 2-NPU all-reduce of 4 KiB on
Ring(2,50GB/s,500ns), endpoint delay 10 ns, analytical); the others are the
hostile shapes: a peer that never delivers, impossible statistics, escape
sequences and long text, refusals; a hello with a 1e-300 bandwidth or NPU
counts whose product overflows, deliveries past 2^64 ns, garbage.
Run from anywhere: python3 tests/fuzz/write_remote_seeds.py
"""
import os
import struct

from write_seeds import f_bytes, f_double, f_varint

HERE = os.path.dirname(os.path.abspath(__file__))
U64_MAX = (1 << 64) - 1


def frame(body):
    return struct.pack('<I', len(body)) + body


# --- FromPeer (the peer's side) ---------------------------------------------------

def ack(error='', version=1):
    body = f_varint(1, version) + f_bytes(2, 'orrery-peer') + (f_bytes(3, error) if error else b'')
    return frame(f_bytes(1, body))


def dim_load(messages, nbytes, busy):
    return f_varint(1, messages) + f_varint(2, nbytes) + f_varint(3, busy)


def reply(delivered=(), next_ns=U64_MAX, dims=(), error=''):
    body = b''.join(f_bytes(1, f_varint(1, t) + f_varint(2, at)) for t, at in delivered)
    body += f_varint(2, next_ns) + b''.join(f_bytes(3, d) for d in dims)
    if error:
        body += f_bytes(4, error)
    return frame(f_bytes(2, body))


def links(items):
    body = b''.join(f_bytes(1, f_bytes(1, name) + f_varint(2, d) + f_varint(3, nbytes) + f_varint(4, busy))
                    for name, d, nbytes, busy in items)
    return frame(f_bytes(3, body))


VALID_REPLIES = [
    reply((), 548, [dim_load(2, 4096, 76)]),
    reply([(0, 548), (1, 548)], U64_MAX, [dim_load(2, 4096, 76)]),
    reply((), 1096, [dim_load(4, 8192, 152)]),
    reply([(1, 1096), (0, 1096)], U64_MAX, [dim_load(4, 8192, 152)]),
]
LINKS = [('dim0 Ring npu 0 -> npu 1', 0, 4096, 76), ('dim0 Ring npu 1 -> npu 0', 0, 4096, 76)]


def client_seeds():
    valid = ack() + b''.join(VALID_REPLIES)
    escapes = '\x1b[31mred\x1b[0m\r\n\u009b2J \u202e\x7f\\'
    return {
        'seed_valid': valid + links(LINKS),
        'seed_valid_no_links': valid + links([]),
        'seed_refused_escapes': ack(escapes + 'A' * 3000),
        'seed_version_2': ack(version=2),
        'seed_never_delivers': ack() + b''.join(reply((), 11 + i) for i in range(300)),
        'seed_bytes_max': ack() + reply((), 548, [dim_load(2, U64_MAX, 76)]),
        'seed_busy_max': ack() + reply((), 548, [dim_load(2, 4096, U64_MAX)]),
        'seed_messages_max': ack() + reply((), 548, [dim_load(U64_MAX, 4096, 76)]),
        'seed_two_dims': ack() + reply((), 548, [dim_load(1, 1, 1), dim_load(1, 1, 1)]),
        'seed_link_bytes_max': valid + links([('dim0 Ring npu 0 -> npu 1', 0, U64_MAX, 76)]),
        'seed_link_busy_max': valid + links([('dim0 Ring npu 0 -> npu 1', 0, 4096, U64_MAX)]),
        'seed_link_dim_7': valid + links([('dim7', 7, 1, 1)]),
        'seed_link_escapes': valid + links([(escapes, 0, 1, 1), ('L' * 3000, 0, 1, 1)]),
        'seed_link_many': valid + links(LINKS * 40),
        'seed_advance_error': ack() + reply(error='a delivery would fall past 2^64 ns\x1b[2J'),
        'seed_unknown_token': ack() + reply([(987654321, 10)], 548),
        'seed_token_twice': ack() + reply([(0, 10), (0, 10)], 548),
        'seed_delivery_wrong_time': ack() + reply([(0, 9)], 548),
        'seed_next_in_past': ack() + reply((), 5),
        'seed_next_2p64_minus_2': ack() + reply((), U64_MAX - 1),
        'seed_idle_undelivered': ack() + reply(),
        'seed_wrong_kind': ack() + links(LINKS),
        'seed_garbage_frame': ack() + b'\x03\x00\x00\x00\xff\xff\xff',
        'seed_frame_over_64mib': ack() + b'\xff\xff\xff\xff junk',
        'seed_truncated': valid[:-3],
    }


# --- ToPeer (a client's side) -------------------------------------------------------

def dim(block, npus, bw, lat, links_per_npu=1):
    return f_bytes(1, block) + f_varint(2, npus) + f_double(3, bw) + f_double(4, lat) + f_varint(5, links_per_npu)


def hello(dims, model='analytical', version=1):
    body = f_varint(1, version) + b''.join(f_bytes(2, d) for d in dims) + f_bytes(3, model)
    return frame(f_bytes(1, body))


def advance(until, injected=()):
    body = b''.join(f_bytes(1, f_varint(1, t) + f_varint(2, s) + f_varint(3, d) + f_varint(4, n) + f_varint(5, at))
                    for t, s, d, n, at in injected)
    return frame(f_bytes(2, body + f_varint(2, until)))


def bye():
    return frame(f_bytes(3, b''))


def links_request():
    return frame(f_bytes(4, b''))


RING2 = [dim('Ring', 2, 50, 500)]
VALID_ADVANCES = [
    advance(10, [(0, 0, 1, 2048, 10), (1, 1, 0, 2048, 10)]),
    advance(548),
    advance(558, [(1, 1, 0, 2048, 558), (0, 0, 1, 2048, 558)]),
    advance(1096),
]


def peer_seeds():
    late = U64_MAX - 1000
    ring4 = [dim('Ring', 4, 50, 500)]
    return {
        'seed_valid': hello(RING2) + b''.join(VALID_ADVANCES) + links_request() + bye(),
        'seed_valid_congestion': hello(RING2, 'congestion-aware') + b''.join(VALID_ADVANCES) + links_request() + bye(),
        'seed_two_dims': hello([dim('Switch', 4, 50, 500, 2), dim('FullyConnected', 4, 25, 100)], 'congestion-aware')
        + advance(10, [(0, 0, 15, 1 << 20, 10), (1, 5, 10, 64, 10)]) + advance(100000) + links_request() + bye(),
        'seed_bandwidth_1e-300': hello([dim('Ring', 4, 1e-300, 500)]) + advance(10, [(0, 0, 1, 2048, 10)]),
        'seed_bandwidth_nan': hello([dim('Ring', 4, float('nan'), float('inf'))]),
        'seed_latency_huge': hello([dim('Ring', 4, 50, 1e300)]),
        'seed_npus_overflow': hello([dim('Ring', 65536, 50, 500)] * 3),
        'seed_npus_u32_max': hello([dim('Ring', (1 << 32) - 1, 50, 500)]),
        'seed_npus_1': hello([dim('Ring', 1, 50, 500)]),
        'seed_links_per_npu': hello([dim('Ring', 4, 50, 500, 1 << 31)]),
        'seed_block_escapes': hello([dim('Torus\x1b[1m', 4, 50, 500)]),
        'seed_model_unknown': hello(ring4, 'ns3\n\x1b[2J'),
        'seed_version_2': hello(ring4, version=2),
        'seed_no_dims': hello([]),
        'seed_big_congestion': hello([dim('FullyConnected', 8192, 50, 500)], 'congestion-aware'),
        'seed_late_delivery': hello([dim('Ring', 4, 1e-3, 500)]) + advance(late, [(5, 0, 1, 1 << 20, late)]),
        'seed_late_congestion': hello(ring4, 'congestion-aware') + advance(late, [(5, 0, 2, 1 << 30, late)]),
        'seed_bytes_max': hello(ring4) + advance(10, [(5, 0, 1, U64_MAX, 10)]),
        'seed_npu_out_of_range': hello(ring4) + advance(10, [(5, 0, 9, 64, 10)]),
        'seed_injected_outside': hello(ring4) + advance(10, [(5, 0, 1, 64, 11)]),
        'seed_back_in_time': hello(ring4) + advance(100) + advance(50),
        'seed_until_max': hello(ring4, 'congestion-aware') + advance(U64_MAX, [(5, 0, 2, 64, 0)]) + links_request(),
        'seed_second_hello': hello(ring4) + hello(ring4),
        'seed_advance_first': advance(10),
        'seed_garbage': b'\x05\x00\x00\x00garbage',
        'seed_frame_over_64mib': b'\xff\xff\xff\xff junk',
        'seed_truncated': hello(ring4)[:-2],
    }


def main():
    for target, seeds in (('remote_client', client_seeds()), ('remote_peer', peer_seeds())):
        d = os.path.join(HERE, 'corpus', target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)


if __name__ == '__main__':
    main()
