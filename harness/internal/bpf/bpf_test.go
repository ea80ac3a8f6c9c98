package bpf

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestInsnLaysOutOpcodeRegistersOffsetAndImmediateAsTheKernel(t *testing.T) {
	// r0 = 2 (BPF_ALU64|BPF_MOV|BPF_K); r2 = *(u32 *)(r1 + 16); exit.
	for _, c := range []struct {
		got, want uint64
	}{
		{Insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, 0, 0, 0, 2), 0x00000002_000000b7},
		{Insn(unix.BPF_LDX|unix.BPF_MEM|unix.BPF_W, 2, 1, 16, 0), 0x00000000_00101261},
		{Insn(unix.BPF_ALU64|unix.BPF_ADD|unix.BPF_K, 2, 0, 0, -4), 0xfffffffc_00000207},
		{Insn(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0), 0x95},
	} {
		if c.got != c.want {
			t.Errorf("got %#016x, want %#016x", c.got, c.want)
		}
	}
}

func TestLoadTakesAValidProgramAndGivesTheVerifiersReasonForAnInvalidOne(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading BPF programs needs root")
	}
	fd, err := Load(unix.BPF_PROG_TYPE_SCHED_CLS, []uint64{
		Insn(unix.BPF_ALU64|unix.BPF_MOV|unix.BPF_K, 0, 0, 0, 2),
		Insn(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0),
	})
	if err != nil {
		t.Fatalf("a two-instruction drop: %v", err)
	}
	unix.Close(fd)
	// Exit without setting r0, which the verifier refuses.
	_, err = Load(unix.BPF_PROG_TYPE_SCHED_CLS, []uint64{Insn(unix.BPF_JMP|unix.BPF_EXIT, 0, 0, 0, 0)})
	if err == nil || !strings.Contains(err.Error(), "R0") {
		t.Errorf("exit with r0 unset: %v, want the verifier's word on R0", err)
	}
	if _, err := Load(unix.BPF_PROG_TYPE_SCHED_CLS, nil); err == nil {
		t.Error("a program of no instructions loaded")
	}
}
