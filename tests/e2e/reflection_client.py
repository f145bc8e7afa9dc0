#!/usr/bin/python3
"""What grpcurl does, with nothing compiled: list the server's services through reflection, resolve
each one's file descriptor, build grpc.health.v1's messages from the descriptors the server sent,
and call Health/Check for "" and worldgen.v1.WorldGen, expecting SERVING.

usage: reflection_client.py --target=HOST:PORT
Exit 0 and a final "reflection-client: OK ..." line on success, 1 otherwise.
"""
import argparse
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


def varint(value):
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value >= 0x80 else 0))
        value >>= 7
        if not value:
            return bytes(out)


def string_field(number, text):
    data = text.encode()
    return varint(number << 3 | 2) + varint(len(data)) + data


def fields(data):
    """(number, value) of a message's length-delimited and varint fields, in order."""
    at, out = 0, []
    while at < len(data):
        key, at = read_varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == 2:
            length, at = read_varint(data, at)
            out.append((number, data[at:at + length]))
            at += length
        elif kind == 0:
            value, at = read_varint(data, at)
            out.append((number, value))
        else:
            raise ValueError("unexpected wire type %d" % kind)
    return out


def read_varint(data, at):
    shift = value = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def reflect(channel, requests):
    """Each request's ServerReflectionResponse fields. The reflection protocol is spoken with raw
    bytes (field numbers of grpc.reflection.v1alpha): this client compiles no proto at all."""
    call = channel.stream_stream(REFLECTION, request_serializer=None, response_deserializer=None)
    return [fields(response) for response in call(iter(requests), timeout=30)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    args = parser.parse_args()
    channel = grpc.insecure_channel(args.target)
    # list_services = 7; ListServiceResponse (6) of ServiceResponse (1) with name (1).
    listing = reflect(channel, [string_field(7, "")])[0]
    services = [dict(fields(s))[1].decode()
                for number, body in listing if number == 6
                for n, s in fields(body) if n == 1]
    # file_containing_symbol = 4 for each; FileDescriptorResponse (4) of file_descriptor_proto (1).
    protos, failures = {}, []
    for service, response in zip(services, reflect(channel, [string_field(4, s) for s in services])):
        files = [raw for number, body in response if number == 4
                 for n, raw in fields(body) if n == 1]
        errors = [body for number, body in response if number == 7]
        if errors or not files:
            failures.append("%s: not resolvable (%r)" % (service, errors))
        for raw in files:
            proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
            protos[proto.name] = proto
    # Files in an order where each one's dependencies come first.
    pool, added = descriptor_pool.DescriptorPool(), set()
    while len(added) < len(protos):
        ready = [p for name, p in protos.items()
                 if name not in added and all(d in added for d in p.dependency)]
        if not ready:
            failures.append("files with missing dependencies: %s" % sorted(set(protos) - added))
            break
        for proto in ready:
            pool.Add(proto)
            added.add(proto.name)
    if "grpc.health.v1.Health" not in services:
        failures.append("grpc.health.v1.Health is not listed: %s" % services)
    if not failures:
        factory = message_factory.MessageFactory(pool)  # protobuf 3.21 (Debian 12)
        request_type = factory.GetPrototype(
            pool.FindMessageTypeByName("grpc.health.v1.HealthCheckRequest"))
        response_type = factory.GetPrototype(
            pool.FindMessageTypeByName("grpc.health.v1.HealthCheckResponse"))
        method = pool.FindServiceByName("grpc.health.v1.Health").FindMethodByName("Check")
        check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                    request_serializer=request_type.SerializeToString,
                                    response_deserializer=response_type.FromString)
        for name in ["", "worldgen.v1.WorldGen"]:
            reply = check(request_type(service=name), timeout=10)
            status = method.output_type.fields_by_name["status"].enum_type.values_by_number[
                reply.status].name
            if status != "SERVING":
                failures.append("Health/Check(%r) = %s" % (name, status))
    for failure in failures:
        print("reflection-client: FAIL " + failure)
    if failures:
        return 1
    print("reflection-client: OK %d services resolved (%s); Health/Check SERVING for \"\" and "
          "worldgen.v1.WorldGen through descriptors from reflection" % (len(services), ", ".join(services)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
