package stf

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"
)

// Error is a syntax error at one place of an STF file.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string {
	if e.Pos.File == "" {
		return fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// maxErrors bounds how many syntax errors one Parse reports; past that the
// rest of the file is most likely not STF at all.
const maxErrors = 20

// ParseFile reads and parses the STF file at path.
func ParseFile(path string) ([]Command, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read STF test: %w", err)
	}
	return Parse(path, string(text))
}

// Parse parses STF text; file names the source in error messages. Every line
// is parsed on its own, so one bad line does not hide errors on later ones:
// the returned error joins up to maxErrors *Error values.
func Parse(file, text string) ([]Command, error) {
	var cmds []Command
	var errs []error
	for i, line := range strings.Split(text, "\n") {
		if len(errs) >= maxErrors {
			errs = append(errs, fmt.Errorf("%s: too many errors, giving up", file))
			break
		}
		p := lineParser{pos: Pos{File: file, Line: i + 1}, text: line}
		cmd, err := p.parse()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return cmds, errors.Join(errs...)
}

// lineParser parses one line. STF is line oriented: every command fits on
// one line and the lexer of p4c returns to "keyword" state at each newline.
type lineParser struct {
	pos  Pos
	text string
	off  int // byte offset into text
}

func (p *lineParser) errorf(format string, args ...any) error {
	pos := p.pos
	pos.Col = p.off + 1
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *lineParser) skipSpace() {
	for p.off < len(p.text) && (p.text[p.off] == ' ' || p.text[p.off] == '\t' || p.text[p.off] == '\r') {
		p.off++
	}
	if p.off < len(p.text) && p.text[p.off] == '#' {
		p.off = len(p.text)
	}
}

func (p *lineParser) atEnd() bool {
	p.skipSpace()
	return p.off >= len(p.text)
}

// peek returns the next non-space byte without consuming it, 0 at the end.
func (p *lineParser) peek() byte {
	if p.atEnd() {
		return 0
	}
	return p.text[p.off]
}

func (p *lineParser) accept(s string) bool {
	p.skipSpace()
	if strings.HasPrefix(p.text[p.off:], s) {
		p.off += len(s)
		return true
	}
	return false
}

func (p *lineParser) expect(s, what string) error {
	if !p.accept(s) {
		return p.errorf("expected %q %s, found %s", s, what, p.found())
	}
	return nil
}

// found describes the text at the current position for error messages.
func (p *lineParser) found() string {
	if p.atEnd() {
		return "end of line"
	}
	rest := p.text[p.off:]
	if i := strings.IndexAny(rest, " \t"); i > 0 {
		rest = rest[:i]
	}
	if len(rest) > 24 {
		rest = rest[:24] + "..."
	}
	return fmt.Sprintf("%q", rest)
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || ('0' <= c && c <= '9') }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *lineParser) ident(what string) (string, error) {
	p.skipSpace()
	start := p.off
	if p.off >= len(p.text) || !isIdentStart(p.text[p.off]) {
		return "", p.errorf("expected %s, found %s", what, p.found())
	}
	for p.off < len(p.text) && isIdentChar(p.text[p.off]) {
		p.off++
	}
	return p.text[start:p.off], nil
}

// qualifiedName reads NAME ('[' N ']')? ('.' NAME ('[' N ']')?)*. Key names
// such as "ethernet.srcAddr.slice" or "hdr.mpls[0].label" are qualified names.
func (p *lineParser) qualifiedName(what string) (string, error) {
	var b strings.Builder
	for {
		id, err := p.ident(what)
		if err != nil {
			return "", err
		}
		b.WriteString(id)
		if p.off < len(p.text) && p.text[p.off] == '[' {
			end := strings.IndexByte(p.text[p.off:], ']')
			if end < 0 {
				return "", p.errorf("missing ']' in %s", what)
			}
			idx := p.text[p.off+1 : p.off+end]
			if _, err := strconv.Atoi(idx); err != nil {
				return "", p.errorf("index %q in %s is not a decimal number", idx, what)
			}
			b.WriteString(p.text[p.off : p.off+end+1])
			p.off += end + 1
		}
		if p.off < len(p.text) && p.text[p.off] == '.' {
			b.WriteByte('.')
			p.off++
			continue
		}
		return b.String(), nil
	}
}

// numberWord reads a run of characters that can belong to a number.
func (p *lineParser) numberWord() string {
	p.skipSpace()
	start := p.off
	if p.off < len(p.text) && p.text[p.off] == '-' {
		p.off++
	}
	for p.off < len(p.text) {
		c := p.text[p.off]
		if isIdentChar(c) || c == '*' {
			p.off++
			continue
		}
		break
	}
	return p.text[start:p.off]
}

// number reads a decimal, hex (0x) or binary (0b) constant; hex and binary
// may use '*' digits.
func (p *lineParser) number(what string) (Number, error) {
	p.skipSpace()
	start := p.off
	text := p.numberWord()
	if text == "" {
		return Number{}, p.errorf("expected %s, found %s", what, p.found())
	}
	n, err := ParseNumber(text)
	if err != nil {
		p.off = start
		return Number{}, p.errorf("%s: %v", what, err)
	}
	return n, nil
}

// ParseNumber parses one STF constant: decimal ("42", "-3"), hex
// ("0x0a0b", "0x0a**") or binary ("0b1*01").
func ParseNumber(text string) (Number, error) {
	n := Number{Text: text, Value: new(big.Int)}
	lower := strings.ToLower(text)
	var digitBits int
	var body string
	switch {
	case strings.HasPrefix(lower, "0x"):
		digitBits, body = 4, lower[2:]
	case strings.HasPrefix(lower, "0b"):
		digitBits, body = 1, lower[2:]
	default:
		neg := strings.HasPrefix(lower, "-")
		digits := strings.TrimPrefix(lower, "-")
		if digits == "" {
			return n, fmt.Errorf("%q is not a number", text)
		}
		for i := 0; i < len(digits); i++ {
			if !isDigit(digits[i]) {
				if _, hex := digitValue(digits[i]); hex {
					return n, fmt.Errorf("%q is not a number (use 0x for hex)", text)
				}
				return n, fmt.Errorf("%q is not a number", text)
			}
		}
		n.Value.SetString(digits, 10)
		if neg {
			n.Value.Neg(n.Value)
		}
		return n, nil
	}
	if body == "" {
		return n, fmt.Errorf("%q has no digits", text)
	}
	n.Care = new(big.Int)
	digitMask := big.NewInt(int64(1)<<digitBits - 1)
	for i := 0; i < len(body); i++ {
		c := body[i]
		n.Value.Lsh(n.Value, uint(digitBits))
		n.Care.Lsh(n.Care, uint(digitBits))
		if c == '*' {
			continue
		}
		v, ok := digitValue(c)
		if !ok || v >= 1<<digitBits {
			return n, fmt.Errorf("%q has an invalid digit %q", text, c)
		}
		n.Value.Or(n.Value, big.NewInt(int64(v)))
		n.Care.Or(n.Care, digitMask)
	}
	n.Bits = len(body) * digitBits
	return n, nil
}

func digitValue(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0'), true
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

func (p *lineParser) smallInt(what string) (int, error) {
	n, err := p.number(what)
	if err != nil {
		return 0, err
	}
	if n.HasWildcards() || !n.Value.IsInt64() || n.Value.Sign() < 0 || n.Value.Int64() > 1<<31-1 {
		return 0, p.errorf("%s %q must be a non-negative integer", what, n.Text)
	}
	return int(n.Value.Int64()), nil
}

func (p *lineParser) parse() (Command, error) {
	if p.atEnd() {
		return nil, nil
	}
	p.pos.Col = p.off + 1
	word, err := p.ident("a command")
	if err != nil {
		return nil, err
	}
	base := Base{At: p.pos}
	var cmd Command
	switch strings.ToLower(word) {
	case "add":
		cmd, err = p.parseAdd(base)
	case "setdefault":
		cmd, err = p.parseSetDefault(base)
	case "remove":
		if w, _ := p.ident("'all'"); strings.ToLower(w) != "all" {
			return nil, p.errorf("only 'remove all' is supported")
		}
		cmd = &RemoveAll{Base: base}
	case "packet":
		cmd, err = p.parsePacket(base)
	case "expect":
		cmd, err = p.parseExpect(base)
	case "no_packet":
		cmd = &NoPacket{Base: base}
	case "wait":
		cmd = &Wait{Base: base}
	case "check_counter":
		cmd, err = p.parseCheckCounter(base)
	case "check_register":
		cmd, err = p.parseCheckRegister(base)
	case "advance_clock":
		cmd, err = p.parseAdvanceClock(base)
	default:
		cmd, err = p.parseDirect(base, strings.ToLower(word))
	}
	if err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.errorf("unexpected %s after %s command", p.found(), strings.ToLower(word))
	}
	return cmd, nil
}

func (p *lineParser) parseAdd(base Base) (Command, error) {
	c := &Add{Base: base, Priority: -1}
	var err error
	if c.Table, err = p.qualifiedName("a table name"); err != nil {
		return nil, err
	}
	if isDigit(p.peek()) {
		if c.Priority, err = p.smallInt("priority"); err != nil {
			return nil, err
		}
	}
	for {
		if p.atEnd() {
			return nil, p.errorf("missing action: add needs ACTION(ARG:VALUE, ...) after the keys")
		}
		start := p.off
		name, err := p.qualifiedName("a key field or action")
		if err != nil {
			return nil, err
		}
		if p.accept("(") {
			p.off = start
			if c.Action, err = p.actionCall(); err != nil {
				return nil, err
			}
			break
		}
		if !p.accept(":") {
			return nil, p.errorf("expected ':' after key field %q or '(' after an action name, found %s", name, p.found())
		}
		k, err := p.keyValue(name)
		if err != nil {
			return nil, err
		}
		c.Keys = append(c.Keys, k)
	}
	if p.accept("=") {
		if c.HandleName, err = p.ident("an entry handle name after '='"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// keyValue reads VALUE, VALUE/LEN, VALUE&&&MASK or LOW->HIGH after "FIELD:".
func (p *lineParser) keyValue(field string) (KeyMatch, error) {
	k := KeyMatch{Field: field, PrefixLen: -1}
	var err error
	if k.Value, err = p.number(fmt.Sprintf("value of key %s", field)); err != nil {
		return k, err
	}
	switch {
	case p.accept("/"):
		n, err := p.smallInt(fmt.Sprintf("prefix length of key %s", field))
		if err != nil {
			return k, err
		}
		k.PrefixLen = n
	case p.accept("&&&"):
		m, err := p.number(fmt.Sprintf("mask of key %s", field))
		if err != nil {
			return k, err
		}
		k.Mask = &m
	case p.accept("->"):
		h, err := p.number(fmt.Sprintf("upper bound of key %s", field))
		if err != nil {
			return k, err
		}
		k.RangeHigh = &h
	}
	return k, nil
}

// actionCall reads NAME(ARG:VALUE, ...).
func (p *lineParser) actionCall() (ActionCall, error) {
	var a ActionCall
	var err error
	if a.Name, err = p.qualifiedName("an action name"); err != nil {
		return a, err
	}
	if err := p.expect("(", "after the action name"); err != nil {
		return a, err
	}
	if p.accept(")") {
		return a, nil
	}
	for {
		name, err := p.ident("an action parameter name")
		if err != nil {
			return a, err
		}
		if err := p.expect(":", "after parameter "+name); err != nil {
			return a, err
		}
		v, err := p.number("value of parameter " + name)
		if err != nil {
			return a, err
		}
		a.Args = append(a.Args, Arg{Name: name, Value: v})
		if p.accept(")") {
			return a, nil
		}
		if err := p.expect(",", "or ')' between action arguments"); err != nil {
			return a, err
		}
	}
}

func (p *lineParser) parseSetDefault(base Base) (Command, error) {
	c := &SetDefault{Base: base}
	var err error
	if c.Table, err = p.qualifiedName("a table name"); err != nil {
		return nil, err
	}
	if c.Action, err = p.actionCall(); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *lineParser) parsePacket(base Base) (Command, error) {
	port, err := p.smallInt("port")
	if err != nil {
		return nil, err
	}
	var hex strings.Builder
	for !p.atEnd() {
		start := p.off
		for p.off < len(p.text) && !strings.ContainsRune(" \t\r#", rune(p.text[p.off])) {
			c := p.text[p.off]
			if _, ok := digitValue(c); !ok {
				return nil, p.errorf("packet data may only hold hex digits, found %q", c)
			}
			p.off++
		}
		hex.WriteString(p.text[start:p.off])
	}
	// Digits go two by two; a lone last digit is a byte of its own value,
	// as p4c's bmv2stf.py reads it (int(digits[i:i+2], 16)).
	s := hex.String()
	data := make([]byte, (len(s)+1)/2)
	for i := range data {
		v, _ := digitValue(s[2*i])
		if 2*i+1 < len(s) {
			lo, _ := digitValue(s[2*i+1])
			v = v<<4 | lo
		}
		data[i] = byte(v)
	}
	return &Packet{Base: base, Port: port, Data: data}, nil
}

func (p *lineParser) parseExpect(base Base) (Command, error) {
	port, err := p.smallInt("port")
	if err != nil {
		return nil, err
	}
	c := &Expect{Base: base, Port: port}
	var pat strings.Builder
	for !p.atEnd() {
		if c.Exact {
			return nil, p.errorf("'$' must end the expected packet, found %s after it", p.found())
		}
		for p.off < len(p.text) && !strings.ContainsRune(" \t\r#", rune(p.text[p.off])) {
			ch := p.text[p.off]
			switch {
			case ch == '$':
				c.Exact = true
			case ch == '*':
				if c.Exact {
					return nil, p.errorf("'$' must end the expected packet")
				}
				pat.WriteByte('*')
			default:
				if _, ok := digitValue(ch); !ok {
					return nil, p.errorf("expected packet may only hold hex digits, '*' and a final '$', found %q", ch)
				}
				if c.Exact {
					return nil, p.errorf("'$' must end the expected packet")
				}
				pat.WriteByte(upperHex(ch))
			}
			p.off++
		}
	}
	c.Nibbles = pat.String()
	c.Any = c.Nibbles == "" && !c.Exact
	return c, nil
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// comparisonOps lists the operators of check_counter; longer ones first so
// "<=" is not read as "<".
var comparisonOps = []string{"==", "!=", "<=", ">=", "<", ">"}

func (p *lineParser) comparison() (string, error) {
	for _, op := range comparisonOps {
		if p.accept(op) {
			return op, nil
		}
	}
	return "", p.errorf("expected a comparison (==, !=, <, <=, >, >=), found %s", p.found())
}

func (p *lineParser) parseCheckCounter(base Base) (Command, error) {
	c := &CounterCheck{Base: base, Kind: "packets", Op: "==", Value: Number{Text: "0", Value: new(big.Int)}}
	var err error
	if c.Counter, err = p.qualifiedName("a counter name"); err != nil {
		return nil, err
	}
	if err := p.expect("(", "after the counter name"); err != nil {
		return nil, err
	}
	if isIdentStart(p.peek()) {
		if c.Handle, err = p.ident("an entry handle"); err != nil {
			return nil, err
		}
	} else {
		n, err := p.number("counter index")
		if err != nil {
			return nil, err
		}
		c.Index = &n
	}
	if err := p.expect(")", "after the counter index"); err != nil {
		return nil, err
	}
	if p.atEnd() {
		return c, nil
	}
	kind, err := p.ident("'packets' or 'bytes'")
	if err != nil {
		return nil, err
	}
	c.Kind = strings.ToLower(kind)
	if c.Kind != "packets" && c.Kind != "bytes" {
		return nil, p.errorf("expected 'packets' or 'bytes', found %q", kind)
	}
	if c.Op, err = p.comparison(); err != nil {
		return nil, err
	}
	if c.Value, err = p.number("expected count"); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *lineParser) parseCheckRegister(base Base) (Command, error) {
	c := &RegisterCheck{Base: base}
	var err error
	if c.Register, err = p.qualifiedName("a register name"); err != nil {
		return nil, err
	}
	if err := p.expect("(", "after the register name"); err != nil {
		return nil, err
	}
	if c.Index, err = p.number("register index"); err != nil {
		return nil, err
	}
	if err := p.expect(")", "after the register index"); err != nil {
		return nil, err
	}
	if c.Op, err = p.comparison(); err != nil {
		return nil, err
	}
	if c.Value, err = p.number("expected register value"); err != nil {
		return nil, err
	}
	return c, nil
}

// clockUnits are the units advance_clock takes.
var clockUnits = map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}

// maxClockAdvance bounds one advance_clock: a real-time target sleeps that
// long.
const maxClockAdvance = time.Hour

func (p *lineParser) parseAdvanceClock(base Base) (Command, error) {
	const usage = "advance_clock N(us|ms|s), e.g. advance_clock 5us"
	p.skipSpace()
	start := p.off
	for p.off < len(p.text) && isDigit(p.text[p.off]) {
		p.off++
	}
	digits := p.text[start:p.off]
	if digits == "" {
		return nil, p.errorf("expected a whole number of us, ms or s, found %s (usage: %s)", p.found(), usage)
	}
	p.skipSpace()
	unitStart := p.off
	for p.off < len(p.text) && isIdentChar(p.text[p.off]) {
		p.off++
	}
	unitText := p.text[unitStart:p.off]
	unit, ok := clockUnits[unitText]
	if !ok {
		p.off = unitStart
		return nil, p.errorf("expected the unit us, ms or s after %s, found %s (usage: %s)", digits, p.found(), usage)
	}
	text := digits + unitText
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > uint64(maxClockAdvance/unit) {
		p.off = start
		return nil, p.errorf("clock advance %s is more than %v", text, maxClockAdvance)
	}
	return &AdvanceClock{Base: base, By: time.Duration(n) * unit, Text: text}, nil
}

// directShape says what follows each pass-through command: whether it names
// an object (register, counter, meter), how many numbers come next (-1: one
// or more) and whether meter rates follow.
type directShape struct {
	object bool
	nums   int
	rates  bool
	usage  string
}

var directShapes = map[string]directShape{
	"mirroring_add":         {nums: 2, usage: "mirroring_add SESSION PORT"},
	"mirroring_add_mc":      {nums: 2, usage: "mirroring_add_mc SESSION GROUP"},
	"mirroring_delete":      {nums: 1, usage: "mirroring_delete SESSION"},
	"mirroring_get":         {nums: 1, usage: "mirroring_get SESSION"},
	"mc_mgrp_create":        {nums: 1, usage: "mc_mgrp_create GROUP"},
	"mc_node_create":        {nums: -1, usage: "mc_node_create RID PORT..."},
	"mc_node_update":        {nums: -1, usage: "mc_node_update NODE PORT..."},
	"mc_node_associate":     {nums: 2, usage: "mc_node_associate GROUP NODE"},
	"counter_read":          {object: true, nums: 1, usage: "counter_read COUNTER INDEX"},
	"counter_write":         {object: true, nums: 3, usage: "counter_write COUNTER INDEX PACKETS BYTES"},
	"register_read":         {object: true, nums: 1, usage: "register_read REGISTER INDEX"},
	"register_write":        {object: true, nums: 2, usage: "register_write REGISTER INDEX VALUE"},
	"register_reset":        {object: true, nums: 0, usage: "register_reset REGISTER"},
	"meter_get_rates":       {object: true, nums: 1, usage: "meter_get_rates METER INDEX"},
	"meter_set_rates":       {object: true, nums: 1, rates: true, usage: "meter_set_rates METER INDEX RATE:BURST..."},
	"meter_array_set_rates": {object: true, nums: 0, rates: true, usage: "meter_array_set_rates METER RATE:BURST..."},
}

func (p *lineParser) parseDirect(base Base, name string) (Command, error) {
	shape, ok := directShapes[name]
	if !ok {
		p.off = 0
		p.skipSpace()
		return nil, p.errorf("unknown STF command %q", name)
	}
	c := &Direct{Base: base, Name: name}
	var err error
	if shape.object {
		if c.Object, err = p.qualifiedName("a name (usage: " + shape.usage + ")"); err != nil {
			return nil, err
		}
	}
	for i := 0; shape.nums < 0 || i < shape.nums; i++ {
		if p.atEnd() {
			if shape.nums < 0 && i >= 2 {
				break
			}
			if shape.nums < 0 && i == 1 && name == "mc_node_create" {
				break // a node with no ports is legal
			}
			return nil, p.errorf("missing argument (usage: %s)", shape.usage)
		}
		n, err := p.number("argument (usage: " + shape.usage + ")")
		if err != nil {
			return nil, err
		}
		if n.HasWildcards() || n.Value.Sign() < 0 {
			return nil, p.errorf("argument %q must be a non-negative number (usage: %s)", n.Text, shape.usage)
		}
		c.Args = append(c.Args, n)
	}
	if shape.rates {
		for !p.atEnd() {
			r, err := p.meterRate()
			if err != nil {
				return nil, err
			}
			c.Rates = append(c.Rates, r)
		}
		if len(c.Rates) == 0 {
			return nil, p.errorf("missing RATE:BURST (usage: %s)", shape.usage)
		}
	}
	return c, nil
}

func (p *lineParser) meterRate() (MeterRate, error) {
	p.skipSpace()
	start := p.off
	for p.off < len(p.text) && !strings.ContainsRune(" \t\r#", rune(p.text[p.off])) {
		p.off++
	}
	text := p.text[start:p.off]
	rate, burst, ok := strings.Cut(text, ":")
	if !ok {
		p.off = start
		return MeterRate{}, p.errorf("meter rate %q must be RATE:BURST", text)
	}
	r, err := strconv.ParseFloat(rate, 64)
	if err != nil || r < 0 {
		p.off = start
		return MeterRate{}, p.errorf("meter rate %q is not a non-negative number", rate)
	}
	b, err := strconv.ParseUint(burst, 10, 64)
	if err != nil {
		p.off = start
		return MeterRate{}, p.errorf("meter burst size %q is not a non-negative integer", burst)
	}
	return MeterRate{Text: text, Rate: r, Burst: b}, nil
}
