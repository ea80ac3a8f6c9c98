package dataplane

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// QueueService is grid switch's own gRPC service, served beside P4Runtime,
// for what simple_switch_CLI sets over Thrift and P4Runtime has no message
// for: set_queue_rate and set_queue_depth. Requests are a
// google.protobuf.Struct: {"port": N, "rate_pps": X} or {"port": N,
// "depth": N}, without "port" for every port.
const QueueService = "grid.switch.Queues"

type queueServer interface {
	setQueue(ctx context.Context, req *structpb.Struct, method string) error
}

func (s *Switch) setQueue(_ context.Context, req *structpb.Struct, method string) error {
	f := req.GetFields()
	var port uint32
	portV, one := f["port"]
	if one {
		p := portV.GetNumberValue()
		if p < 0 || p > 511 || p != float64(uint32(p)) {
			return status.Errorf(codes.InvalidArgument, "port: %v is not a v1model port", p)
		}
		port = uint32(p)
	}
	var err error
	switch method {
	case "SetQueueRate":
		err = s.queues.SetRate(port, !one, f["rate_pps"].GetNumberValue())
	case "SetQueueDepth":
		d := f["depth"].GetNumberValue()
		if d != float64(int(d)) {
			return status.Errorf(codes.InvalidArgument, "depth: %v is not a number of packets", d)
		}
		err = s.queues.SetDepth(port, !one, int(d))
	}
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	s.log.Info("egress queues set", "method", method, "port", portV.AsInterface(), "rate_pps", f["rate_pps"].AsInterface(), "depth", f["depth"].AsInterface())
	return nil
}

func queueMethod(name string) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		req := &structpb.Struct{}
		if err := dec(req); err != nil {
			return nil, err
		}
		return &emptypb.Empty{}, srv.(queueServer).setQueue(ctx, req, name)
	}}
}

var queueServiceDesc = grpc.ServiceDesc{
	ServiceName: QueueService,
	HandlerType: (*queueServer)(nil),
	Methods:     []grpc.MethodDesc{queueMethod("SetQueueRate"), queueMethod("SetQueueDepth")},
}

// SetQueueRate asks the grid switch at conn to limit port's egress queues
// (every port's when port is nil) to pps packets per second, as
// simple_switch_CLI's set_queue_rate does.
func SetQueueRate(ctx context.Context, conn grpc.ClientConnInterface, port *uint32, pps float64) error {
	return callQueue(ctx, conn, "SetQueueRate", port, "rate_pps", pps)
}

// SetQueueDepth asks the grid switch at conn to hold depth packets per
// egress queue of port (every port when nil): set_queue_depth.
func SetQueueDepth(ctx context.Context, conn grpc.ClientConnInterface, port *uint32, depth int) error {
	return callQueue(ctx, conn, "SetQueueDepth", port, "depth", float64(depth))
}

func callQueue(ctx context.Context, conn grpc.ClientConnInterface, method string, port *uint32, key string, v float64) error {
	fields := map[string]any{key: v}
	if port != nil {
		fields["port"] = float64(*port)
	}
	req, err := structpb.NewStruct(fields)
	if err != nil {
		return err
	}
	err = conn.Invoke(ctx, "/"+QueueService+"/"+method, req, &emptypb.Empty{})
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("the switch has no %s service (simple_switch_grpc sets queues over Thrift only): %w", QueueService, err)
	}
	return err
}
