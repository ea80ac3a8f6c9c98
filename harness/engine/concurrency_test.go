package engine

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// report sends a failure without blocking: the first ones suffice.
func report(errs chan<- string, msg string) {
	select {
	case errs <- msg:
	default:
	}
}

// Packets on several goroutines while the control plane adds, modifies and
// deletes routes: every packet is forwarded by some consistent route or
// dropped by the default, never corrupted (run with -race for the memory
// model side).
func TestConcurrentTrafficAndTableUpdates(t *testing.T) {
	sw := ipv4Switch(t)
	frame := ipv4Frame([4]byte{10, 1, 2, 3}, 64, 20)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				err := sw.Process(uint32(g), frame, func(o Output) {
					switch o.Port {
					case 1, 2, 9:
					default:
						report(errs, "unexpected port")
					}
					if !bytes.Equal(o.Data[34:], frame[34:]) || o.Data[22] != 63 {
						report(errs, "corrupted packet")
					}
				})
				if err != nil {
					report(errs, err.Error())
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 500 {
			h, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10, 1, 2, 3}, 32)}, Action: "forward", Args: [][]byte{{9}, {2, 0, 0, 0, 0, 9}}})
			if err != nil {
				report(errs, err.Error())
				return
			}
			if err := sw.ModifyEntry("ipv4_lpm", h, "forward", [][]byte{{9}, {2, 0, 0, 0, 0, byte(i)}}); err != nil {
				report(errs, err.Error())
			}
			if err := sw.SetMulticastGroup(uint16(1+i%5), []Replica{{Port: 1}}); err != nil {
				report(errs, err.Error())
			}
			if err := sw.DeleteEntry("ipv4_lpm", h); err != nil {
				report(errs, err.Error())
			}
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// An action's register read-modify-write is atomic with respect to other
// packets (bmv2 holds the register's lock for the whole action), while the
// control plane reads and writes other cells of the same register.
func TestRegisterIncrementsFromConcurrentPacketsAllCount(t *testing.T) {
	p := miniProgram(t, `["a",8,false],["r",32,false]`,
		`{"op":"register_read","parameters":[`+fld("h", "r")+`,{"type":"register_array","value":"ingress.reg"},`+fld("h", "a")+`]},`+
			assign(fld("h", "r"), op("&", op("+", fld("h", "r"), hexv("0x1")), hexv("0xffffffff")))+`,`+
			`{"op":"register_write","parameters":[{"type":"register_array","value":"ingress.reg"},`+fld("h", "a")+`,`+fld("h", "r")+`]}`,
		map[string]string{"register_arrays": `[{"name":"ingress.reg","id":0,"size":4,"bitwidth":32}]`})
	sw := NewSwitch(p, Config{})
	const goroutines, packets = 4, 2000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range packets {
				if err := sw.Process(0, []byte{1, 0, 0, 0, 0}, func(Output) {}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 500 {
		if err := sw.WriteRegister("reg", 3, []byte{0, 0, 0, byte(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := sw.ReadRegister("reg", 1); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	v, err := sw.ReadRegister("reg", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := int(v[0])<<24 | int(v[1])<<16 | int(v[2])<<8 | int(v[3]); got != goroutines*packets {
		t.Errorf("reg[1] = %d after %d increments: updates were lost", got, goroutines*packets)
	}
}

func TestTraceNamesParserStatesTablesAndActions(t *testing.T) {
	var b strings.Builder
	sw := NewSwitch(loadFile(t, "testdata/ipv4_lpm.json"), Config{Trace: &b})
	if _, err := sw.AddEntry("ipv4_lpm", Entry{Match: []Match{LPM([]byte{10, 0, 0, 0}, 8)}, Action: "forward", Args: [][]byte{{3}, {2, 0, 0, 0, 0, 3}}}); err != nil {
		t.Fatal(err)
	}
	run(t, sw, 1, ipv4Frame([4]byte{10, 1, 2, 3}, 64, 0))
	run(t, sw, 1, ipv4Frame([4]byte{11, 1, 2, 3}, 64, 0))
	for _, want := range []string{
		"Parser 'parser' entering state 'parse_ipv4'",
		"Table 'ingress.ipv4_lpm': hit with handle 1, key 0x0a010203",
		"Action entry is ingress.forward - 03,020000000003",
		"Transmitting packet of size 34 out of port 3",
		"Table 'ingress.ipv4_lpm': miss, key 0x0b010203",
		"Dropping packet at the end of ingress",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, b.String())
		}
	}
}

func TestProcessAllocatesNothingInSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: allocation counts are meaningless")
	}
	sw := ipv4Switch(t)
	frame := ipv4Frame([4]byte{10, 1, 2, 3}, 64, 100)
	emit := func(Output) {}
	allocs := testing.AllocsPerRun(200, func() {
		if err := sw.Process(1, frame, emit); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per packet, want 0", allocs)
	}
}

func TestLogMsgWritesItsValuesToTheTrace(t *testing.T) {
	p := miniProgram(t, `["a",8,false],["b",16,false]`,
		`{"op":"log_msg","parameters":[{"type":"string","value":"a={} b={}"},{"type":"parameters_vector","value":[`+
			fld("h", "a")+`,`+fld("h", "b")+`]}]}`, nil)
	var b strings.Builder
	run(t, NewSwitch(p, Config{Trace: &b}), 0, []byte{5, 1, 0})
	if !strings.Contains(b.String(), "log_msg: a=5 b=256") {
		t.Errorf("trace lacks the log message:\n%s", b.String())
	}
}
