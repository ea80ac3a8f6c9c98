#!/usr/bin/env python3
"""A course-style P4Runtime controller for the lab tests: what p4lang/tutorials'
exercises do with their Python library (p4runtime_pb2 and grpc), written anew.

It becomes the primary controller of a switch, loads the program wrapped in a
p4.tmp.P4DeviceConfig as the tutorials' library does, writes IPv4 routes and
reads a counter back:

    controller.py ADDR DEVICE_ID P4INFO.txtpb BMV2.json PREFIX/LEN,MAC,PORT... [--counter NAME INDEX]
"""
import argparse
import ipaddress
import queue
import sys

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.tmp import p4config_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc


def by_name(entities, name):
    for e in entities:
        if e.preamble.name == name or e.preamble.alias == name:
            return e
    raise KeyError(name)


def encode(value, bitwidth):
    """Bytes of a number, or of an IPv4 or MAC address, padded to whole bytes."""
    size = (bitwidth + 7) // 8
    if isinstance(value, str) and value.count(":") == 5:
        return bytes.fromhex(value.replace(":", ""))
    if isinstance(value, str):
        return ipaddress.IPv4Address(value).packed
    return value.to_bytes(size, "big")


class Switch:
    def __init__(self, addr, device_id):
        self.device_id = device_id
        self.channel = grpc.insecure_channel(addr)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests = queue.Queue()
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))

    def become_primary(self):
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.low = 1
        self.requests.put(req)
        for resp in self.stream:
            if resp.HasField("arbitration"):
                if resp.arbitration.status.code != 0:
                    sys.exit("not primary: %s" % resp.arbitration.status)
                return

    def set_pipeline(self, p4info, bmv2_json_path):
        config = p4config_pb2.P4DeviceConfig()
        config.reassign = True
        with open(bmv2_json_path, "rb") as f:
            config.device_data = f.read()
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest()
        req.device_id = self.device_id
        req.election_id.low = 1
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = config.SerializeToString()
        self.stub.SetForwardingPipelineConfig(req)

    def write(self, entity_setter):
        req = p4runtime_pb2.WriteRequest()
        req.device_id = self.device_id
        req.election_id.low = 1
        update = req.updates.add()
        update.type = p4runtime_pb2.Update.INSERT
        entity_setter(update.entity)
        self.stub.Write(req)

    def read_counter(self, counter_id, index):
        req = p4runtime_pb2.ReadRequest()
        req.device_id = self.device_id
        entity = req.entities.add()
        entity.counter_entry.counter_id = counter_id
        entity.counter_entry.index.index = index
        for resp in self.stub.Read(req):
            for e in resp.entities:
                return e.counter_entry.data

    def shutdown(self):
        self.requests.put(None)
        self.channel.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("addr")
    parser.add_argument("device_id", type=int)
    parser.add_argument("p4info")
    parser.add_argument("bmv2_json")
    parser.add_argument("routes", nargs="*")
    parser.add_argument("--counter", nargs=2)
    args = parser.parse_args()

    p4info = p4info_pb2.P4Info()
    with open(args.p4info) as f:
        text_format.Merge(f.read(), p4info)
    table = by_name(p4info.tables, "MyIngress.ipv4_lpm")
    action = by_name(p4info.actions, "MyIngress.ipv4_forward")

    sw = Switch(args.addr, args.device_id)
    sw.become_primary()
    if args.routes:
        sw.set_pipeline(p4info, args.bmv2_json)
    for route in args.routes:
        prefix, mac, port = route.split(",")
        net = ipaddress.IPv4Network(prefix)

        def set_entry(entity, net=net, mac=mac, port=port):
            te = entity.table_entry
            te.table_id = table.preamble.id
            m = te.match.add()
            m.field_id = table.match_fields[0].id
            m.lpm.value = net.network_address.packed
            m.lpm.prefix_len = net.prefixlen
            te.action.action.action_id = action.preamble.id
            for p, v in zip(action.params, (mac, int(port))):
                param = te.action.action.params.add()
                param.param_id = p.id
                param.value = encode(v, p.bitwidth)

        sw.write(set_entry)
        print("route %s -> %s port %s" % (prefix, mac, port))
    if args.counter:
        counter = by_name(p4info.counters, args.counter[0])
        data = sw.read_counter(counter.preamble.id, int(args.counter[1]))
        print("%s[%s] packets=%d bytes=%d" % (args.counter[0], args.counter[1], data.packet_count, data.byte_count))
    sw.shutdown()


if __name__ == "__main__":
    main()
