package monitor

import (
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Netlink messages as the kernel writes them, to check the parser on what a
// live namespace rarely produces: stale replies, errors, truncation.

func nlMsg(typ uint16, seq uint32, body []byte) []byte {
	ne := binary.NativeEndian
	b := make([]byte, nlmAlign(unix.NLMSG_HDRLEN+len(body)))
	ne.PutUint32(b[0:], uint32(unix.NLMSG_HDRLEN+len(body)))
	ne.PutUint16(b[4:], typ)
	ne.PutUint32(b[8:], seq)
	copy(b[unix.NLMSG_HDRLEN:], body)
	return b
}

// statsMsg is an RTM_NEWSTATS body for ifindex with rx and tx bytes (packets
// are a tenth of them), after an attribute the parser must skip.
func statsMsg(ifindex int, rxBytes, txBytes uint64) []byte {
	ne := binary.NativeEndian
	body := make([]byte, sizeofIfStatsMsg)
	ne.PutUint32(body[4:], uint32(ifindex))
	other := make([]byte, unix.SizeofRtAttr+6) // IFLA_STATS_LINK_XSTATS, unaligned length
	ne.PutUint16(other[0:], uint16(len(other)))
	ne.PutUint16(other[2:], unix.IFLA_STATS_LINK_XSTATS|unix.NLA_F_NESTED)
	body = append(body, other...)
	body = append(body, 0, 0) // padding to 4 bytes
	stats := make([]byte, unix.SizeofRtAttr+24*8)
	ne.PutUint16(stats[0:], uint16(len(stats)))
	ne.PutUint16(stats[2:], unix.IFLA_STATS_LINK_64)
	ne.PutUint64(stats[4+0:], rxBytes/10)
	ne.PutUint64(stats[4+8:], txBytes/10)
	ne.PutUint64(stats[4+16:], rxBytes)
	ne.PutUint64(stats[4+24:], txBytes)
	ne.PutUint64(stats[4+48:], 3)
	return append(body, stats...)
}

func TestStatsDumpParsingSkipsStaleRepliesAndForeignInterfaces(t *testing.T) {
	r := &reader{node: "s1", slots: map[int]int{101: 0, 103: 1}, seq: 7}
	var dump []byte
	dump = append(dump, nlMsg(unix.RTM_NEWSTATS, 6, statsMsg(101, 999, 999))...) // an abandoned dump's
	dump = append(dump, nlMsg(unix.RTM_NEWSTATS, 7, statsMsg(1, 50, 50))...)     // lo
	dump = append(dump, nlMsg(unix.RTM_NEWSTATS, 7, statsMsg(101, 1000, 2000))...)
	dump = append(dump, nlMsg(unix.RTM_NEWSTATS, 7, statsMsg(103, 30, 40))...)
	dump = append(dump, nlMsg(unix.NLMSG_DONE, 7, make([]byte, 4))...)
	c := make([]Counters, 2)
	done, found, err := r.parse(dump, c)
	if err != nil || !done || found != 2 {
		t.Fatalf("parse: done %v, found %d, err %v; want done, 2, nil", done, found, err)
	}
	want := []Counters{
		{RxBytes: 1000, RxPackets: 100, RxDropped: 3, TxBytes: 2000, TxPackets: 200},
		{RxBytes: 30, RxPackets: 3, RxDropped: 3, TxBytes: 40, TxPackets: 4},
	}
	for i := range want {
		if c[i] != want[i] {
			t.Errorf("interface %d: %+v, want %+v", i, c[i], want[i])
		}
	}
	// A dump split over two reads: the first part is not done.
	done, found, err = r.parse(dump[:len(dump)-nlmAlign(unix.NLMSG_HDRLEN+4)], c)
	if done || found != 2 || err != nil {
		t.Errorf("first part of a dump: done %v, found %d, err %v", done, found, err)
	}
}

func TestStatsDumpErrorsAreReported(t *testing.T) {
	r := &reader{node: "s1", slots: map[int]int{101: 0}, seq: 1}
	errBody := make([]byte, 4+unix.NLMSG_HDRLEN)
	errno := -int32(unix.EOPNOTSUPP)
	binary.NativeEndian.PutUint32(errBody, uint32(errno))
	_, _, err := r.parse(nlMsg(unix.NLMSG_ERROR, 1, errBody), make([]Counters, 1))
	if err == nil || !strings.Contains(err.Error(), "RTM_GETSTATS") || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("error reply: %v, want RTM_GETSTATS: operation not supported", err)
	}
	msg := nlMsg(unix.RTM_NEWSTATS, 1, statsMsg(101, 1, 1))
	_, _, err = r.parse(msg[:len(msg)-8], make([]Counters, 1))
	if err == nil || !strings.Contains(err.Error(), "netlink message of") {
		t.Errorf("truncated message: %v, want an error", err)
	}
}
