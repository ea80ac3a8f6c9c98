// Package p4rt is a P4Runtime v1 server (P4Runtime 1.5.0) over the
// engine: what makes grid's embedded switch a drop-in for
// simple_switch_grpc. SetForwardingPipelineConfig takes a P4Info and the
// bmv2 JSON as p4_device_config, as simple_switch_grpc does; the data plane
// feeds received frames to Server.Process.
package p4rt
