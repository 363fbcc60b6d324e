#!/usr/bin/env python3
"""Writes the hand-made seeds of tests/fuzz/corpus/<target>/ (seed_* files).

The shapes are the ones that found bugs in Orrery (issue 9, part 8): NaN, inf,
huge and tiny numbers, negative sizes, long chains of instant nodes, wide
fan-out, communicator groups that leave ranks out, NPU counts that overflow.
Crash and slow inputs found by fuzzing sit beside them (crash-*, slow-*, ...).
Run from anywhere: python3 tests/fuzz/write_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def f_double(field, d):
    return key(field, 1) + struct.pack('<d', d)


def attr(name, kind, value):
    body = f_bytes(1, name)
    if kind == 'u64':
        body += f_varint(13, value)
    elif kind == 'i64':
        body += f_varint(9, value)
    elif kind == 'double':
        body += f_double(3, value)
    elif kind == 'str':
        body += f_bytes(29, value)
    elif kind == 'bools':
        body += f_bytes(28, f_bytes(1, bytes(1 if x else 0 for x in value)))
    return body


# Chakra NodeType
META, LOAD, STORE, COMP, SEND, RECV, COLL = 1, 2, 3, 4, 5, 6, 7


def node(nid, ntype, deps=(), attrs=(), duration=None, ctrl=()):
    b = f_varint(1, nid) + f_bytes(2, 'n%d' % nid) + f_varint(3, ntype)
    for d in ctrl:
        b += f_varint(4, d)
    for d in deps:
        b += f_varint(5, d)
    if duration is not None:
        b += f_varint(7, duration)
    for a in attrs:
        b += f_bytes(10, attr(*a))
    return b


def trace(nodes):
    meta = f_bytes(1, '0.0.4')
    out = varint(len(meta)) + meta
    for n in nodes:
        out += varint(len(n)) + n
    return out


def coll(nid, ctype, size, deps=(), kind='u64', extra=()):
    return node(nid, COLL, deps, [('comm_type', 'u64', ctype), ('comm_size', kind, size)] + list(extra))


def et_seeds():
    s = {}
    s['seed_valid'] = trace([node(0, COMP, duration=5), node(1, LOAD, [0], [('tensor_size', 'u64', 1024)]),
                             coll(2, 0, 4096, [1]), node(3, SEND, [2], [('comm_dst', 'u64', 2), ('comm_size', 'u64', 64)]),
                             node(4, RECV, [2], [('comm_src', 'u64', 0), ('comm_size', 'u64', 64)])])
    for name, v in [('nan', float('nan')), ('inf', float('inf')), ('neg', -1.0), ('huge', 1e300),
                    ('tiny', 1e-300), ('2p64', 2.0 ** 64)]:
        s['seed_double_%s' % name] = trace([coll(0, 0, v, kind='double'),
                                           node(1, COMP, [0], [('num_ops', 'double', v), ('tensor_size', 'double', v)]),
                                           node(2, LOAD, [1], [('tensor_size', 'double', v)])])
    s['seed_comm_size_minus1'] = trace([coll(0, 0, -1, kind='i64')])
    s['seed_comm_size_max'] = trace([coll(0, 6, (1 << 64) - 1), coll(1, 2, (1 << 63), [0])])
    s['seed_duration_max'] = trace([node(0, COMP, duration=(1 << 64) - 1), node(1, COMP, [0], duration=(1 << 63))])
    s['seed_instant_chain'] = trace([node(i, META, [i - 1] if i else []) for i in range(500)])
    s['seed_instant_chain_comp'] = trace([node(i, COMP, [i - 1] if i else [], [('num_ops', 'u64', 0)])
                                          for i in range(500)])
    s['seed_fan_out'] = trace([node(0, COMP, duration=1)] + [node(i, COMP, [0], duration=1) for i in range(1, 500)])
    s['seed_fan_in'] = trace([node(i, COMP, duration=1) for i in range(499)] + [node(499, COMP, list(range(499)))])
    s['seed_cycle'] = trace([node(0, COMP, [1]), node(1, COMP, [0])])
    s['seed_missing_dep'] = trace([node(0, COMP, [7])])
    s['seed_dup_id'] = trace([node(0, COMP), node(0, COMP)])
    s['seed_bad_type'] = trace([node(0, 99), coll(1, 42, 10)])
    s['seed_peer_out_of_range'] = trace([node(0, SEND, [], [('comm_dst', 'u64', 1 << 40), ('comm_size', 'u64', 8)]),
                                         node(1, RECV, [], [('comm_src', 'i64', -1), ('comm_size', 'u64', 8)])])
    s['seed_involved_dim'] = trace([coll(0, 0, 4096, extra=[('involved_dim', 'bools', [True, False, True, True])]),
                                    coll(1, 0, 4096, [0], extra=[('involved_dim', 'bools', [])])])
    s['seed_root'] = trace([coll(0, 5, 4096, extra=[('root', 'u64', 3)]), coll(1, 1, 7, [0], extra=[('root', 'u64', 99)])])
    s['seed_pg_name'] = trace([coll(0, 0, 4096, extra=[('pg_name', 'str', '1')]),
                               coll(1, 0, 4096, [0], extra=[('pg_name', 'str', 'nope')])])
    s['seed_mem_tier'] = trace([node(0, LOAD, [], [('tensor_size', 'u64', 64), ('memory_tier', 'str', 'local')]),
                                node(1, STORE, [0], [('tensor_size', 'u64', 64), ('memory_tier', 'str', 'far')])])
    s['seed_odd_sizes'] = trace([coll(i, t, sz, [i - 1] if i else []) for i, (t, sz) in
                                 enumerate([(0, 1), (2, 3), (7, 7), (6, 13), (0, 0), (9, 0)])])
    s['seed_truncated'] = s['seed_valid'][:-3]
    s['seed_huge_length'] = varint(1 << 40) + b'\x00' * 8
    return s


def text_seeds():
    net = {
        'seed_astra': 'topology: [ Ring, Switch ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 1000 ]\n',
        'seed_orrery': 'dims:\n  - {block: Ring, npus: 4, bandwidth_gbps: 50, latency_ns: 500, links_per_npu: 2}\n',
        'seed_orrery_mesh': 'dims:\n  - {block: Mesh, npus: 2, bandwidth_gbps: 50, latency_ns: 5}\n'
                            '  - {block: RingUni, npus: 2, bandwidth_gbps: 5, latency_ns: 50}\n',
        'seed_nan': 'topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ .nan ]\nlatency: [ .inf ]\n',
        'seed_huge': 'topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1e300 ]\nlatency: [ 1e300 ]\n',
        'seed_tiny': 'topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1e-300 ]\nlatency: [ 1e-300 ]\n',
        'seed_npus_overflow_int': 'topology: [ Ring, Ring ]\nnpus_count: [ 65536, 65536 ]\nbandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n',
        'seed_npus_overflow_i64': 'topology: [ Ring ]\nnpus_count: [ 99999999999999999999 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n',
        'seed_npus_1e10': 'topology: [ Ring ]\nnpus_count: [ 1e10 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n',
        'seed_ring_999999999': 'topology: [ Ring ]\nnpus_count: [ 999999999 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n',
        'seed_units': 'topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1.6TB/s ]\nlatency: [ 5us ]\n',
        'seed_negative': 'topology: [ Switch ]\nnpus_count: [ -4 ]\nbandwidth: [ -50 ]\nlatency: [ -1 ]\n',
        'seed_mismatch': 'topology: [ Ring, Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50, 1, 2 ]\nlatency: [ ]\n',
    }
    system = {
        'seed_full': '{"scheduling-policy": "FIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,\n'
                     ' "preferred-dataset-splits": 4, "all-reduce-implementation": ["doubleBinaryTree"],\n'
                     ' "all-gather-implementation": ["direct2"], "reduce-scatter-implementation": ["halvingDoubling"],\n'
                     ' "all-to-all-implementation": ["oneRing"], "collective-optimization": "baseline",\n'
                     ' "local-mem-bw": 1600, "roofline-enabled": 1, "peak-perf": 900,\n'
                     ' "intra-dimension-scheduling": "SmallestFirst", "inter-dimension-scheduling": "themis"}\n',
        'seed_nan': '{"endpoint-delay": NaN, "local-mem-bw": Infinity, "peak-perf": -Infinity}',
        'seed_1e309': '{"endpoint-delay": 1e309, "local-mem-bw": 1e-300, "preferred-dataset-splits": 1e10}',
        'seed_splits_1e6': '{"preferred-dataset-splits": 1000000, "all-reduce-implementation": ["ring"]}',
        'seed_negative': '{"endpoint-delay": -5, "active-chunks-per-dimension": -1, "local-mem-bw": -1600}',
        'seed_roofline_zero': '{"roofline-enabled": 1, "peak-perf": 0, "local-mem-bw": 0}',
        'seed_wrong_types': '{"endpoint-delay": "10", "all-reduce-implementation": "ring", "scheduling-policy": 3}',
        'seed_unknown_key': '{"endpoint-dealy": 10, "all-reduce-implementation": ["rnig"]}',
        'seed_custom': '{"all-reduce-implementation": ["custom:nowhere"], "in-switch-reduction-bw": 1e300}',
    }
    remote = {
        'seed_pool': '{"memory-type": "MEMORY_POOL", "remote-mem-latency": 500, "remote-mem-bw": 50,'
                     ' "num-nodes": 2, "num-npus-per-node": 2}',
        'seed_per_npu': '{"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 1, "remote-mem-bw": 1}',
        'seed_per_node_zero': '{"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-latency": 5,'
                              ' "remote-mem-bw": 5, "num-nodes": 2, "num-npus-per-node": 0}',
        'seed_nan': '{"memory-type": "MEMORY_POOL", "remote-mem-latency": NaN, "remote-mem-bw": Infinity}',
        'seed_huge': '{"memory-type": "MEMORY_POOL", "remote-mem-latency": 1e300, "remote-mem-bw": 1e-300,'
                     ' "num-nodes": 1e10}',
        'seed_negative': '{"memory-type": "MEMORY_POOL", "remote-mem-latency": -1, "remote-mem-bw": -50}',
        'seed_words': '{"memory-type": "MEMORY_POOL", "remote-mem-latency": "abc", "remote-mem-bw": "1.6TB/s"}',
        'seed_none': '{"memory-type": "NO_MEMORY_EXPANSION"}',
    }
    memory = {
        'seed_pool': 'backend: astra-sim\nmemory-type: MEMORY_POOL\nremote-mem-latency: 500\nremote-mem-bw: 50\n',
        'seed_pool_orrery': 'backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\nports: 2\nsharing: fair\n',
        'seed_units': 'backend: pool\nlatency_ns: 500\nbandwidth_gbps: 1.6TB/s\n',
        'seed_inf_sharing': 'backend: pool\nlatency_ns: 1\nbandwidth_gbps: .inf\nports: 4\nsharing: fair\n',
        'seed_ports_2p63': 'backend: pool\nlatency_ns: 1\nbandwidth_gbps: 1\nports: 9223372036854775808\n',
        'seed_tiny': 'backend: pool\nlatency_ns: 1e-300\nbandwidth_gbps: 1e-300\n',
        'seed_huge': 'backend: pool\nlatency_ns: 1e300\nbandwidth_gbps: 1e300\n',
        'seed_npus_per_node_zero': 'backend: astra-sim\nmemory-type: PER_NODE_MEMORY_EXPANSION\n'
                                   'remote-mem-latency: 1\nremote-mem-bw: 1\nnum-nodes: 2\nnum-npus-per-node: 0\n',
        'seed_unknown': 'backend: astra-sim\nremote-mem-latncy: 1\n',
        'seed_nested': 'backend: [pool]\nlatency_ns: {a: 1}\n',
    }
    groups = {
        'seed_all': '{"0": [0, 1, 2, 3]}',
        'seed_non_member': '{"0": [0, 1]}',
        'seed_non_member_2': '{"0": [2], "1": [0, 1, 3]}',
        'seed_out_of_range': '{"0": [0, 1, 2, 99999999999], "1": [-1]}',
        'seed_dup': '{"0": [1, 1, 2, 3]}',
        'seed_empty': '{"0": []}',
        'seed_types': '{"0": [0.5, "1", null, true]}',
        'seed_nan': '{"0": [NaN, Infinity, 1e309]}',
    }
    notation = {
        'seed_three': 'Ring(8,200GB/s,50ns)_FullyConnected(4,100GB/s,500ns)_Switch(16,50GB/s,2us)',
        'seed_2d': 'Torus2D(4x4,100GB/s,1us,2)_Mesh2D(2x2,1TB/s,1ms)',
        'seed_units': 'RingUni(2,10Gb/s,1ns)_Mesh(3,500MB/s,3us)',
        'seed_overflow_int': 'Ring(2147483648,1GB/s,1ns)',
        'seed_overflow_i64': 'Ring(65536,1GB/s,1ns)_Ring(65536,1GB/s,1ns)_Ring(65536,1GB/s,1ns)_Ring(65536,1GB/s,1ns)',
        'seed_overflow_2d': 'Torus2D(99999999999x99999999999,1GB/s,1ns)',
        'seed_bw_inf': 'Ring(4,1e400GB/s,1ns)',
        'seed_bw_tiny': 'Ring(4,1e-300GB/s,1e-300ns)',
        'seed_nan': 'Ring(4,nanGB/s,infns)',
        'seed_ring_999999999': 'Ring(999999999,1GB/s,1ns)',
        'seed_syntax': 'Ring(4,,1ns',
    }
    return {'network_yaml': net, 'system_json': system, 'remote_memory_json': remote, 'memory_yaml': memory,
            'comm_group_json': groups, 'notation': notation}


def main():
    def write(target, name, data):
        # Inputs that still crash Orrery wait in pending/ until the fix lands.
        pending = os.path.join(HERE, 'pending', target)
        d = pending if os.path.exists(os.path.join(pending, name)) else os.path.join(HERE, 'corpus', target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data if isinstance(data, bytes) else data.encode())

    for name, data in et_seeds().items():
        write('et_reader', name, data)
        write('simulation', name, data)
    for target, seeds in text_seeds().items():
        for name, data in seeds.items():
            write(target, name, data)


if __name__ == '__main__':
    main()
