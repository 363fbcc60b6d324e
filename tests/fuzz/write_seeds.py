#!/usr/bin/env python3
"""Writes the hand-made seeds of tests/fuzz/corpus/<target>/ (seed_* files).

The shapes are the ones that found bugs in Orrery (issue 9, part 8): NaN, inf,
huge and tiny numbers, negative sizes, long chains of instant nodes, wide
fan-out, communicator groups that leave ranks out, NPU counts that overflow;
and for the readers of issue 31 (model YAML, sweep spec, sweep rows, CSV,
search flags): duplicate keys, non-scalar keys, YAML alias amplification,
dimensions up to 2^40, products that overflow, 10^7-point axes, a filter
literal 1e999, row indices of 1e300 and below 0, torn last lines, thousands of
CSV columns and shards of different specs.
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
                             coll(2, 0, 4096, [1], extra=[('pg_name', 'str', '0')]),  # the fixed traces' group
                             node(3, SEND, [2], [('comm_dst', 'u64', 2), ('comm_size', 'u64', 64)]),
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


def laughs(levels=9, width=9, leaf='"lol"'):
    """YAML alias amplification (billion laughs): width**levels leaves from a few hundred bytes."""
    out = 'l0: &l0 [%s]\n' % ', '.join([leaf] * width)
    for i in range(1, levels):
        out += 'l%d: &l%d [%s]\n' % (i, i, ', '.join(['*l%d' % (i - 1)] * width))
    return out, 'l%d' % (levels - 1)


def model_seeds():
    gpt = 'name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n'
    lol, top = laughs()
    dlrm = ('kind: dlrm\nname: tiny\nembedding_dim: 16\ndense_features: 13\ntables: [1000, 2000, 300]\n'
            'pooling: [1, 2, 3]\nbottom_mlp: [64, 16]\ntop_mlp: [64, 1]\ninteraction: dot\n')
    return {
        'seed_gpt': gpt,
        'seed_llama_gqa': gpt + 'kv_heads: 2\nffn: 688\ngated_ffn: true\ntied_embeddings: false\nbiases: false\n'
                                'rms_norm: true\nlearned_positions: false\n',
        'seed_moe': gpt + 'experts: 8\ntop_k: 2\nshared_experts: 1\nmoe_layer_freq: 2\nexpert_ffn: 512\n',
        'seed_dlrm': dlrm,
        'seed_dlrm_cat': dlrm.replace('interaction: dot', 'interaction: cat').replace('pooling: [1, 2, 3]',
                                                                                     'pooling: 4'),
        'seed_dup_key': gpt + 'layers: 8\n',
        'seed_nonscalar_key': '? [layers, hidden]\n: 4\n' + gpt,
        'seed_map_key': '{a: 1}: 2\n' + gpt,
        'seed_billion_laughs': lol + gpt,
        'seed_billion_laughs_value': lol + gpt.replace('layers: 4', 'layers: *' + top),
        'seed_dlrm_laughs': lol + dlrm.replace('tables: [1000, 2000, 300]', 'tables: *' + top),
        'seed_dims_2p40': gpt.replace('hidden: 256', 'hidden: 1099511627776'),
        'seed_overflow_products': 'layers: 65536\nhidden: 16777216\nheads: 65536\nhead_dim: 65536\nkv_heads: 65536\n'
                                  'vocab: 16777216\nseq_len: 16777216\nffn: 16777216\n',
        'seed_moe_overflow': gpt + 'experts: 65536\ntop_k: 65536\nshared_experts: 65536\nexpert_ffn: 16777216\n',
        'seed_1e999': gpt.replace('hidden: 256', 'hidden: 1e999'),
        'seed_negative': gpt.replace('layers: 4', 'layers: -1'),
        'seed_heads_not_dividing': gpt.replace('heads: 8', 'heads: 7'),
        'seed_kind_list': 'kind: [dlrm]\n' + gpt,
        'seed_dlrm_huge_tables': dlrm.replace('tables: [1000, 2000, 300]',
                                              'tables: [1099511627776, 1099511627776, 1099511627776]')
                                     .replace('embedding_dim: 16', 'embedding_dim: 1048576'),
        'seed_dlrm_many_tables': dlrm.replace('tables: [1000, 2000, 300]',
                                              'tables: [' + ', '.join(['7'] * 3000) + ']').replace(
                                                  'pooling: [1, 2, 3]', 'pooling: 1000000'),
        'seed_not_mapping': '- layers\n- 4\n',
        'seed_empty': '',
    }


SPEC_BASE = 'base:\n  network: base_network.yml\n  system: base_system.json\n  workload: base\n  comm-groups: base_groups.json\n'
GEN_BASE = ('base:\n  network: "Ring(4,100GB/s,500ns)"\n  system: roofline_system.json\n'
            '  generate: "--model=megatron-22b --tp=2 --dp=2 --microbatches=2"\n')


def spec_seeds():
    lol, top = laughs()
    b = SPEC_BASE
    return {
        'seed_axes': b + 'axes:\n  network.dim0.bandwidth_gbps: [50, 100]\n  network.dim0.latency_ns: [500, 1000]\n'
                         '  run.iterations: [1, 2]\n',
        'seed_zip': b + 'zip:\n  network.dim0.bandwidth_gbps: [50, 100, 200]\n  network.dim0.latency_ns: [5, 10, 20]\n',
        'seed_points': b + 'points:\n  - {network.dim0.bandwidth_gbps: 50}\n  - {system.endpoint-delay: 20, '
                           'system.all-reduce-implementation: "direct"}\n  - {network.notation: "Switch(4,50GB/s,1us)"}\n',
        'seed_filters': b + 'axes:\n  network.dim0.bandwidth_gbps: [10, 25, 50]\n  network.dim0.latency_ns: [5, 50]\n'
                            'filters:\n  - "bandwidth_gbps * 10 >= latency_ns or not (latency_ns == 5)"\n'
                            '  - "system.all-reduce-implementation == \'ring\'"\n',
        'seed_generate': GEN_BASE + 'axes:\n  gen.zero: [0, 1]\n  gen.tp: [1, 2, 4]\nfilters: ["tp * dp <= 4"]\n',
        'seed_dup_key': b + 'axes:\n  network.dim0.bandwidth_gbps: [50]\n  network.dim0.bandwidth_gbps: [100]\n',
        'seed_dup_top_key': b + 'axes:\n  run.iterations: [1]\naxes:\n  run.iterations: [2]\n',
        'seed_nonscalar_key': b + 'axes:\n  ? [network.dim0.bandwidth_gbps]\n  : [50]\n',
        'seed_billion_laughs': lol + b + 'axes:\n  network.dim0.bandwidth_gbps: *' + top + '\n',
        'seed_billion_laughs_points': b + 'points:\n  - &p {run.iterations: 1, network.dim0.latency_ns: &v 7}\n'
                                      + '  - *p\n' * 40 + '  - {run.iterations: *v}\n',
        'seed_dims_2p40': b + 'axes:\n  network.dim0.npus: [1099511627776, 4]\n',
        'seed_products_overflow': b + 'axes:\n  network.notation: ["Ring(65536,1GB/s,1ns)_Ring(65536,1GB/s,1ns)'
                                      '_Ring(65536,1GB/s,1ns)"]\n',
        'seed_axes_1e7': b + 'axes:\n' + ''.join('  %s: [%s]\n' % (p, ', '.join(str(i + 1) for i in range(60)))
                                                 for p in ['network.dim0.bandwidth_gbps', 'network.dim0.latency_ns',
                                                           'run.iterations', 'system.endpoint-delay']),
        'seed_axes_filtered': b + 'axes:\n' + ''.join('  %s: [%s]\n' % (p, ', '.join(str(i + 1) for i in range(40)))
                                                      for p in ['network.dim0.bandwidth_gbps',
                                                                'network.dim0.latency_ns']) +
                              'filters: ["bandwidth_gbps == latency_ns"]\n',
        'seed_filter_1e999': b + 'axes:\n  network.dim0.bandwidth_gbps: [50, 100]\nfilters: ["bandwidth_gbps < 1e999"]\n',
        'seed_filter_div0': b + 'axes:\n  network.dim0.bandwidth_gbps: [50, 100]\nfilters: ["bandwidth_gbps / 0 > 1"]\n',
        'seed_filter_deep': b + 'axes:\n  run.iterations: [1, 2]\nfilters: ["' + '(' * 300 + 'iterations' + ')' * 300
                            + ' > 1"]\n',
        'seed_value_1e999': b + 'axes:\n  network.dim0.bandwidth_gbps: [1e999, .nan, -5]\n',
        'seed_gen_without_generate': b + 'axes:\n  gen.tp: [1, 2]\n',
        'seed_zip_unequal': b + 'zip:\n  run.iterations: [1, 2]\n  network.dim0.latency_ns: [1]\n',
        'seed_unknown_path': b + 'axes:\n  network.dim9.bandwidth_gbps: [1]\n  sytem.endpoint-delay: [1]\n',
        'seed_base_absent': 'axes:\n  run.iterations: [1]\n',
    }


def row(index, h, status='ok', extra=''):
    return ('{"index": %s, "point": {"network.dim0.bandwidth_gbps": "50", "network.dim0.latency_ns": "500"}, '
            '"hash": "%s", "status": "%s", "finished_ns": 1000, "compute_ns": 10, "exposed_comm_ns": 900, '
            '"mem_stall_ns": 0, "peer_wait_ns": 0, "idle_ns": 90, "peak_local_bytes": null, '
            '"peak_remote_bytes": null, "gen_memory_bytes": null, "model_flops": null, "mfu": null, '
            '"dim_busy_ns": [800], "dim_exposed_comm_ns": []%s, "path_comm_other_ns": null}\n'
            % (index, h, status, extra))


def ident(identity='@ID', points=4, rows=4, shard='1/1', merged='false'):
    return ('{"identity": "%s", "spec": "rows_spec.yml", "axis_paths": ["network.dim0.bandwidth_gbps", '
            '"network.dim0.latency_ns"], "points": %s, "rows": %s, "shard": "%s", "merged": %s}\n'
            % (identity, points, rows, shard, merged))


def rows_seeds():
    r = [row(i, '@H%d' % i) for i in range(4)]
    s1, s2 = 'sweep.shard-1-of-2', 'sweep.shard-2-of-2'
    return {
        'seed_resume': '@@ sweep.id\n' + ident() + '@@ sweep.jsonl\n' + r[0] + r[2],
        'seed_resume_torn': '@@ sweep.id\n' + ident() + '@@ sweep.jsonl\n' + r[0] + r[1][:50],
        'seed_resume_stale_hash': '@@ sweep.jsonl\n' + row(0, 'ffffffffffffffff') + row(7, '@H1'),
        'seed_resume_shard': '@@ %s.id\n' % s1 + ident(rows=2, shard='1/2') + '@@ %s.jsonl\n' % s1 + r[0],
        'seed_index_1e300': '@@ sweep.jsonl\n' + row('1e300', '@H0'),
        'seed_index_negative': '@@ sweep.jsonl\n' + row(-1, '@H0') + '@@ %s.jsonl\n' % s1 + row(-3, '@H0'),
        'seed_index_float': '@@ sweep.jsonl\n' + row(2.5, '@H2') + row(9999999, '@H2'),
        'seed_merge': ('@@ %s.id\n' % s1 + ident(rows=2, shard='1/2') + '@@ %s.jsonl\n' % s1 + r[0] + r[2] +
                       '@@ %s.id\n' % s2 + ident(rows=2, shard='2/2') + '@@ %s.jsonl\n' % s2 + r[1] + r[3]),
        'seed_merge_partial': ('@@ %s.id\n' % s1 + ident(rows=2, shard='1/2') + '@@ %s.jsonl\n' % s1 + r[0] +
                               r[2][:30]),
        'seed_mixed_spec_shards': ('@@ %s.id\n' % s1 + ident(rows=2, shard='1/2') + '@@ %s.jsonl\n' % s1 + r[0] +
                                   '@@ %s.id\n' % s2 + ident('0123456789abcdef', rows=2, shard='2/2') +
                                   '@@ %s.jsonl\n' % s2 + r[1]),
        'seed_mixed_split': ('@@ %s.id\n' % s1 + ident(shard='1/2') + '@@ %s.jsonl\n' % s1 + r[0] +
                             '@@ sweep.shard-1-of-3.id\n' + ident(shard='1/3') + '@@ sweep.shard-1-of-3.jsonl\n' + r[1]),
        'seed_merge_overlap': ('@@ %s.id\n' % s1 + ident(shard='1/2') + '@@ %s.jsonl\n' % s1 + r[0] +
                               '@@ %s.id\n' % s2 + ident(shard='2/2') + '@@ %s.jsonl\n' % s2 + r[0]),
        'seed_merge_over_unsharded': ('@@ sweep.id\n' + ident() + '@@ %s.id\n' % s1 + ident(shard='1/2') +
                                      '@@ %s.jsonl\n' % s1 + r[0]),
        'seed_id_points_1e300': '@@ %s.id\n' % s1 + ident(points='1e300', rows=-1, shard='1/2') +
                                '@@ %s.jsonl\n' % s1 + r[0],
        'seed_id_shard_huge': ('@@ sweep.shard-1-of-1048576.id\n' + ident(shard='1/1048576') +
                               '@@ sweep.shard-1-of-1048576.jsonl\n' + r[0] + '@@ sweep.shard-9-of-2.jsonl\n' + r[1]),
        'seed_id_not_json': '@@ sweep.id\n{"identity": 5\n@@ sweep.jsonl\n' + r[0],
        'seed_row_types': ('@@ sweep.jsonl\n' + row(0, '@H0', extra=', "mfu": "x"') +
                           '{"index": 1, "point": [1, 2], "hash": 3}\n'),
        'seed_row_values': ('@@ sweep.jsonl\n' + row(1, '@H1').replace('"finished_ns": 1000', '"finished_ns": 1e300')
                            + row(2, '@H2').replace('"dim_busy_ns": [800]', '"dim_busy_ns": [-1, 1e19, "x"]')),
        'seed_row_dup_key': '@@ sweep.jsonl\n' + row(0, '@H0').replace('{"index": 0,', '{"index": 0, "index": 3,'),
        'seed_not_json': '@@ sweep.jsonl\nnot json at all\n\n',
        'seed_empty_files': '@@ sweep.jsonl\n@@ sweep.id\n@@ %s.jsonl\n' % s1,
    }


def csv_seeds():
    head = ('index,network.dim0.bandwidth_gbps,hash,status,finished_ns,iteration_s,compute_ns,exposed_comm_ns,'
            'mem_stall_ns,peer_wait_ns,idle_ns\n')
    rows = ''.join('%d,%d,%016x,%s,%d,%.9f,%d,%d,0,0,%d\n' % (i, 10 * (i + 1), i, 'ok' if i != 2 else
                                                             '"failed, see log"', 1000 * (i + 1), 1e-6 * (i + 1),
                                                             100, 800, 100) for i in range(5))
    wide = ','.join('c%d' % i for i in range(5000)) + '\n' + ','.join(str(i % 7) for i in range(5000)) + '\n'
    return {
        'seed_sweep': head + rows,
        'seed_crlf_bom': '\ufeff' + (head + rows).replace('\n', '\r\n'),
        'seed_quoted': 'x,y,"z ""quoted"", with comma"\n"1","2","line\nbreak"\n3,4,5\n',
        'seed_thousands_columns': wide,
        'seed_dup_column': 'x,y,x\n1,2,3\n',
        'seed_empty_name': 'x,,z\n1,2,3\n',
        'seed_unclosed_quote': 'x,y\n"1,2\n',
        'seed_bare_cr': 'x,y\r1,2\n',
        'seed_ragged': 'x,y,z\n1,2\n1,2,3,4\n',
        'seed_numbers': 'x,y,z,status\nnan,inf,1e999,ok\n-1e308,1e-320,0x10,ok\n1,2,3,ok\n1,2,3,ok\n',
        'seed_torn': head + rows[:-7],
        'seed_header_only': head,
        'seed_empty': '',
    }


ROOF = ('{"roofline-enabled": 1, "peak-perf": 300, "local-mem-bw": 2000, "preferred-dataset-splits": 2,\n'
        ' "all-reduce-implementation": ["ring", "ring"], "all-gather-implementation": ["ring", "ring"],\n'
        ' "reduce-scatter-implementation": ["ring", "ring"], "all-to-all-implementation": ["ring", "ring"]}\n')


def search_seeds():
    gpt = 'name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n'
    files = '@@ m.yml\n' + gpt + '@@ sys.json\n' + ROOF
    net8 = '--network=Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)\n'
    base = '--model=@/m.yml\n--npus=8\n--global-batch=16\n' + net8 + '--system=@/sys.json\n'
    lol, top = laughs()
    return {
        'seed_valid': base + files,
        'seed_flags': base + '--hbm-gb=0.5\n--top=3\n' + files,
        'seed_preset_moe': '--model=mixtral-8x7b\n--npus=16\n--global-batch=64\n'
                           '--network=Ring(8,100GB/s,500ns)_Switch(2,25GB/s,2us)\n--system=@/sys.json\n' + files,
        'seed_network_yaml': base.replace(net8, '--network=@/net.yml\n') + files +
                             '@@ net.yml\ntopology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100, 25 ]\n'
                             'latency: [ 500, 2000 ]\n',
        'seed_memory': base + '--memory=@/mem.yml\n' + files +
                       '@@ mem.yml\nbackend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\n',
        'seed_memory_both': base + '--memory=@/mem.yml\n--remote-memory=@/rm.json\n' + files +
                            '@@ mem.yml\nbackend: pool\n@@ rm.json\n{"memory-type": "NO_MEMORY_EXPANSION"}\n',
        'seed_dlrm': base + '@@ m.yml\nkind: dlrm\nembedding_dim: 16\ndense_features: 13\ntables: [10]\n'
                            'bottom_mlp: [16]\ntop_mlp: [1]\n@@ sys.json\n' + ROOF,
        'seed_npus_mismatch': base.replace('--npus=8', '--npus=4') + files,
        'seed_no_roofline': base + '@@ m.yml\n' + gpt + '@@ sys.json\n{"roofline-enabled": 0}\n',
        'seed_batch_2p40': base.replace('--global-batch=16', '--global-batch=1099511627776') + files,
        'seed_batch_overflow': base.replace('--global-batch=16', '--global-batch=99999999999999999999') + files,
        'seed_hbm_1e999': base + '--hbm-gb=1e999\n' + files,
        'seed_hbm_tiny': base + '--hbm-gb=1e-300\n' + files,
        'seed_hbm_1e18': base + '--hbm-gb=1e18\n' + files,
        'seed_dup_flag': base + '--npus=8\n' + files,
        'seed_unknown_flag': base + '--nups=8\nstray\n' + files,
        'seed_separate_values': '--model\n@/m.yml\n--npus\n8\n--global-batch\n16\n' + net8 + '--system\n@/sys.json\n'
                                + files,
        'seed_top_0': base + '--top=0\n' + files,
        'seed_model_dup_key': base + '@@ m.yml\n' + gpt + 'layers: 8\n@@ sys.json\n' + ROOF,
        'seed_model_laughs': base + '@@ m.yml\n' + lol + gpt + '@@ sys.json\n' + ROOF,
        'seed_network_overflow': base.replace(net8, '--network=Ring(65536,1GB/s,1ns)_Ring(65536,1GB/s,1ns)\n') + files,
        'seed_no_survivor': base.replace('--global-batch=16', '--global-batch=1').replace('--npus=8', '--npus=16')
                            .replace(net8, '--network=Ring(16,100GB/s,500ns)\n') + '--hbm-gb=0.001\n' + files,
        'seed_missing': '--model=@/m.yml\n' + files,
        'seed_system_dup_key': base + '@@ m.yml\n' + gpt + '@@ sys.json\n{"peak-perf": 1, "peak-perf": 2}\n',
    }


def heterogeneity_seeds():
    lol, top = laughs()
    return {
        'seed_valid': 'compute:\n  - ranks: 1\n    speed: 0.8\nlinks:\n  - ranks: "2-3"\n    dim: 0\n    bandwidth: 0.5\n',
        'seed_list': 'compute:\n  - ranks: [0, 3]\n    speed: 2\n',
        'seed_empty': '',
        'seed_not_mapping': '- 1\n- 2\n',
        'seed_rank_out': 'compute:\n  - ranks: 4\n    speed: 1\n',
        'seed_rank_negative': 'compute:\n  - ranks: -1\n    speed: 1\n',
        'seed_range_backwards': 'compute:\n  - ranks: "3-1"\n    speed: 1\n',
        'seed_range_huge': 'compute:\n  - ranks: "0-99999999999999999999"\n    speed: 1\n',
        'seed_twice': 'compute:\n  - ranks: 1\n    speed: 0.5\n  - ranks: "0-2"\n    speed: 2\n',
        'seed_speed_zero': 'compute:\n  - ranks: 1\n    speed: 0\n',
        'seed_speed_nan': 'compute:\n  - ranks: 1\n    speed: .nan\n',
        'seed_speed_inf': 'compute:\n  - ranks: 1\n    speed: .inf\n',
        'seed_speed_tiny': 'compute:\n  - ranks: 1\n    speed: 1e-6\n',
        'seed_dim_out': 'links:\n  - ranks: 1\n    dim: 1\n    bandwidth: 0.5\n',
        'seed_unknown_key': 'compute:\n  - ranks: 1\n    speed: 0.5\n    sped: 1\nlink:\n  - ranks: 1\n',
        'seed_dup_key': 'compute:\n  - ranks: 1\n    speed: 0.5\n    speed: 0.7\n',
        'seed_laughs': lol + 'compute:\n  - ranks: [' + ', '.join(['*' + top] * 4) + ']\n    speed: 1\n',
    }


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
    for target, seeds in [('model_yaml', model_seeds()), ('sweep_spec', spec_seeds()), ('sweep_rows', rows_seeds()),
                          ('csv_reader', csv_seeds()), ('search_args', search_seeds()),
                          ('heterogeneity_yaml', heterogeneity_seeds())]:
        for name, data in seeds.items():
            write(target, name, data)


if __name__ == '__main__':
    main()
