package dataplane

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// pcapFile is a pcap capture one port writes from its receiver or its
// senders. Each frame is flushed at once, so the file can be read while the
// switch runs. A nil *pcapFile records nothing.
type pcapFile struct {
	path   string
	mu     sync.Mutex
	file   *os.File
	buf    *bufio.Writer
	w      *pcapgo.Writer
	failed bool // a write failed: logged once, the file records no more
}

func createPcap(path string) (*pcapFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("pcap file: %w", err)
	}
	p := &pcapFile{path: path, file: f, buf: bufio.NewWriter(f)}
	p.w = pcapgo.NewWriter(p.buf)
	err = p.w.WriteFileHeader(MaxFrame, layers.LinkTypeEthernet)
	if err == nil {
		err = p.buf.Flush()
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("pcap file %s: %w", path, err)
	}
	return p, nil
}

func (p *pcapFile) write(frame []byte, log *slog.Logger) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		return
	}
	ci := gopacket.CaptureInfo{Timestamp: time.Now(), CaptureLength: len(frame), Length: len(frame)}
	err := p.w.WritePacket(ci, frame)
	if err == nil {
		err = p.buf.Flush()
	}
	if err != nil {
		p.failed = true
		log.Warn("pcap file records no more frames", "file", p.path, "err", err)
	}
}

func (p *pcapFile) close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.buf.Flush()
	if p.failed {
		err = nil // already reported
	}
	if cerr := p.file.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("pcap file %s: %w", p.path, err)
	}
	return nil
}
