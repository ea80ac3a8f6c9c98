package p4rt

import (
	"errors"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

// fieldError is a refused request part: the gRPC code it maps to and the
// path of the offending P4Runtime field inside the request
// ("updates[3].entity.table_entry.match[1].field_id").
type fieldError struct {
	code codes.Code
	path string
	msg  string
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// errAt builds a fieldError at path (relative to the entity being handled).
func errAt(code codes.Code, path, format string, args ...any) *fieldError {
	return &fieldError{code: code, path: path, msg: fmt.Sprintf(format, args...)}
}

// under prefixes err's path with prefix; errors that are not fieldErrors
// become INTERNAL ones at prefix.
func under(prefix string, err error) *fieldError {
	var fe *fieldError
	if !errors.As(err, &fe) {
		return &fieldError{code: codes.Internal, path: prefix, msg: err.Error()}
	}
	out := *fe
	switch {
	case out.path == "":
		out.path = prefix
	case out.path[0] == '[':
		out.path = prefix + out.path
	default:
		out.path = prefix + "." + out.path
	}
	return &out
}

// grpcError turns a fieldError into a gRPC status error carrying its code.
func (e *fieldError) grpcError() error { return status.Error(e.code, e.Error()) }

// batchError is the status of a Write in which some updates failed: code
// UNKNOWN with one p4.v1.Error per update, in order (OK for the updates
// that succeeded), as the P4Runtime specification's error reporting asks.
func batchError(perUpdate []*fieldError) error {
	details := make([]*p4v1.Error, len(perUpdate))
	failed := 0
	var first *fieldError
	for i, fe := range perUpdate {
		if fe == nil {
			details[i] = &p4v1.Error{CanonicalCode: int32(codes.OK)}
			continue
		}
		failed++
		if first == nil {
			first = fe
		}
		details[i] = &p4v1.Error{CanonicalCode: int32(fe.code), Message: fe.Error()}
	}
	st := status.New(codes.Unknown, fmt.Sprintf("%d of %d updates failed; first: %v", failed, len(perUpdate), first))
	msgs := make([]protoadapt.MessageV1, len(details))
	for i, d := range details {
		msgs[i] = d
	}
	withDetails, err := st.WithDetails(msgs...)
	if err != nil {
		return status.Error(codes.Internal, fmt.Sprintf("encode write errors: %v (%s)", err, st.Message()))
	}
	return withDetails.Err()
}
