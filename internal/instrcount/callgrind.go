package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A Profile is what instrcount needs of one callgrind output file (format
// version 1, event Ir): every function's own cost and its calls, with the
// cost of each call (the callee's inclusive cost on that call).
type Profile struct {
	Cmd    string
	Totals int64
	Funcs  map[FuncKey]*Func
}

// FuncKey names a function: its ELF object and its name as callgrind gives
// it (a symbol, or 0x<offset> in a stripped object; 'N marks a recursion
// level, with --separate-recs).
type FuncKey struct {
	Object string
	Name   string
}

func (k FuncKey) String() string { return k.Name + " [" + k.Object + "]" }

// Func is one function of a profile.
type Func struct {
	Key  FuncKey
	File string // the file of its fn= line (inlined code keeps the function)
	Self int64
	// Foreign is the part of Self whose source lines are in another file
	// than File, by file: code inlined from elsewhere, and code callgrind
	// charges to the function it left when a goroutine switch (gogo) jumps
	// into another function without a call.
	Foreign map[string]int64
	// SelfAt is the own cost per instruction address, when the profile was
	// written with --dump-instr=yes.
	SelfAt map[uint64]int64
	Calls  map[FuncKey]*Arc
}

// Arc is the calls of one function to another.
type Arc struct {
	Count int64
	Cost  int64 // inclusive
}

// Inclusive is the function's own cost and that of all its calls.
func (f *Func) Inclusive() int64 {
	c := f.Self
	for _, a := range f.Calls {
		c += a.Cost
	}
	return c
}

// ReadProfile parses one callgrind file.
func ReadProfile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := parseProfile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// compressed resolves callgrind's name compression: "(id) name" defines id,
// "(id)" refers to it.
type compressed map[string]string

func (c compressed) resolve(v string) string {
	if !strings.HasPrefix(v, "(") {
		return v
	}
	end := strings.IndexByte(v, ')')
	if end < 0 {
		return v
	}
	id, name := v[:end+1], strings.TrimSpace(v[end+1:])
	if name == "" {
		return c[id]
	}
	c[id] = name
	return name
}

func parseProfile(r io.Reader) (*Profile, error) {
	p := &Profile{Funcs: map[FuncKey]*Func{}}
	objs, files, fns := compressed{}, compressed{}, compressed{}
	var (
		positions  = []string{"line"}
		instrPos   = -1
		last       []int64
		ob, fl     string
		src        string // the file of the cost lines: fl, or fi=/fe='s
		cob        string
		cfn        string
		cur        *Func
		pendingArc *Arc // set by calls=: the next cost line is the call's
		nev        = -1 // index of Ir among the events
		haveTotals bool
		sum        int64
	)
	fn := func(k FuncKey) *Func {
		f := p.Funcs[k]
		if f == nil {
			f = &Func{Key: k, File: fl, Calls: map[FuncKey]*Arc{}}
			p.Funcs[k] = f
		}
		return f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		c := line[0]
		if (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*' {
			fields := strings.Fields(line)
			if len(fields) < len(positions) {
				return nil, fmt.Errorf("line %d: %q: fewer fields than positions", lineNo, line)
			}
			if last == nil {
				last = make([]int64, len(positions))
			}
			// The line of a call (or a jump) is relative to the last cost
			// line's position but does not move it (callgrind's dump.c).
			at := last
			if pendingArc != nil {
				at = make([]int64, len(last))
			}
			for i := range positions {
				v, err := position(fields[i], last[i])
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", lineNo, err)
				}
				at[i] = v
			}
			var ir int64
			if k := len(positions) + nev; nev >= 0 && k < len(fields) {
				v, err := strconv.ParseInt(fields[k], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: %q: %w", lineNo, line, err)
				}
				ir = v
			}
			if cur == nil {
				return nil, fmt.Errorf("line %d: a cost outside any function", lineNo)
			}
			if pendingArc != nil {
				pendingArc.Cost += ir
				pendingArc = nil
				continue
			}
			cur.Self += ir
			sum += ir
			if src != cur.File {
				if cur.Foreign == nil {
					cur.Foreign = map[string]int64{}
				}
				cur.Foreign[src] += ir
			}
			if instrPos >= 0 {
				if cur.SelfAt == nil {
					cur.SelfAt = map[uint64]int64{}
				}
				cur.SelfAt[uint64(at[instrPos])] += ir
			}
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(key, " :") {
			key, val, ok = strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("line %d: %q: not a callgrind line", lineNo, line)
			}
			val = strings.TrimSpace(val)
			switch key {
			case "cmd":
				p.Cmd = val
			case "positions":
				positions = strings.Fields(val)
				instrPos = -1
				for i, s := range positions {
					if s == "instr" {
						instrPos = i
					}
				}
				last = nil
			case "events":
				nev = -1
				for i, e := range strings.Fields(val) {
					if e == "Ir" {
						nev = i
					}
				}
				if nev < 0 {
					return nil, fmt.Errorf("line %d: no Ir among the events %q", lineNo, val)
				}
			case "totals", "summary":
				if key == "summary" && haveTotals {
					break
				}
				fs := strings.Fields(val)
				if nev < len(fs) {
					v, err := strconv.ParseInt(fs[nev], 10, 64)
					if err != nil {
						return nil, fmt.Errorf("line %d: %w", lineNo, err)
					}
					p.Totals, haveTotals = v, key == "totals"
				}
			}
			continue
		}
		switch key {
		case "ob":
			ob = objs.resolve(val)
		case "fl":
			fl = files.resolve(val)
			src = fl
		case "fi", "fe":
			src = files.resolve(val)
		case "cfi", "cfl":
			files.resolve(val)
		case "fn":
			cur = fn(FuncKey{ob, fns.resolve(val)})
			src = cur.File
			cob, cfn, pendingArc = "", "", nil
		case "cob":
			cob = objs.resolve(val)
		case "cfn":
			cfn = fns.resolve(val)
		case "calls":
			if cur == nil || cfn == "" {
				return nil, fmt.Errorf("line %d: calls= without a function or a callee", lineNo)
			}
			fs := strings.Fields(val)
			n, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			// The callee's object: cob= names it when it differs from
			// the caller's.
			to := FuncKey{ob, cfn}
			if cob != "" {
				to.Object = cob
			}
			a := cur.Calls[to]
			if a == nil {
				a = &Arc{}
				cur.Calls[to] = a
			}
			a.Count += n
			pendingArc = a
			cob = ""
		case "jump", "jcnd":
			// (--collect-jumps) the next line is the jump's count, not a cost
			pendingArc = &Arc{}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !haveTotals && p.Totals == 0 {
		p.Totals = sum
	}
	return p, nil
}

// position is one position field of a cost line: a number (decimal, or hex
// with 0x), +N or -N relative to the last, or * for the last.
func position(s string, last int64) (int64, error) {
	switch {
	case s == "*":
		return last, nil
	case s[0] == '+' || s[0] == '-':
		d, err := strconv.ParseInt(s[1:], 0, 64)
		if err != nil {
			return 0, fmt.Errorf("position %q: %w", s, err)
		}
		if s[0] == '-' {
			d = -d
		}
		return last + d, nil
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("position %q: %w", s, err)
	}
	return int64(v), nil
}

// Merge adds q's costs to p (the threads of one process, written apart
// with --separate-threads=yes).
func (p *Profile) Merge(q *Profile) {
	p.Totals += q.Totals
	for k, g := range q.Funcs {
		f := p.Funcs[k]
		if f == nil {
			f = &Func{Key: k, File: g.File, Calls: map[FuncKey]*Arc{}}
			p.Funcs[k] = f
		}
		f.Self += g.Self
		for file, c := range g.Foreign {
			if f.Foreign == nil {
				f.Foreign = map[string]int64{}
			}
			f.Foreign[file] += c
		}
		if g.SelfAt != nil {
			if f.SelfAt == nil {
				f.SelfAt = map[uint64]int64{}
			}
			for a, c := range g.SelfAt {
				f.SelfAt[a] += c
			}
		}
		for to, b := range g.Calls {
			a := f.Calls[to]
			if a == nil {
				a = &Arc{}
				f.Calls[to] = a
			}
			a.Count += b.Count
			a.Cost += b.Cost
		}
	}
}

// WriteProfile writes p in callgrind's format (version 1, event Ir), with only the functions keep keeps; a kept
// function keeps all its calls, so its inclusive cost is unchanged, and
// the totals stay those of the whole profile.
func WriteProfile(w io.Writer, p *Profile, keep func(*Func) bool) error {
	bw := bufio.NewWriter(w)
	instr := false
	for _, f := range p.Funcs {
		if f.SelfAt != nil && keep(f) {
			instr = true
		}
	}
	fmt.Fprintf(bw, "# callgrind format\nversion: 1\ncreator: instrcount trim\ncmd: %s\n", p.Cmd)
	if instr {
		fmt.Fprintf(bw, "positions: instr line\n")
	} else {
		fmt.Fprintf(bw, "positions: line\n")
	}
	fmt.Fprintf(bw, "events: Ir\nsummary: %d\n\n", p.Totals)
	keys := make([]FuncKey, 0, len(p.Funcs))
	for k, f := range p.Funcs {
		if keep(f) {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
	pos := "0"
	if instr {
		pos = "0 0"
	}
	// Names compressed as callgrind does ("(id) name", then "(id)"): a name
	// may itself start with "(", as "(below main)" does.
	ids := map[string]map[string]int{"o": {}, "f": {}, "n": {}}
	name := func(space, v string) string {
		m := ids[space]
		if id, ok := m[v]; ok {
			return fmt.Sprintf("(%d)", id)
		}
		m[v] = len(m) + 1
		return fmt.Sprintf("(%d) %s", m[v], v)
	}
	for _, k := range keys {
		f := p.Funcs[k]
		fmt.Fprintf(bw, "ob=%s\nfl=%s\nfn=%s\n", name("o", k.Object), name("f", f.File), name("n", k.Name))
		if f.SelfAt != nil && instr {
			addrs := make([]uint64, 0, len(f.SelfAt))
			for a := range f.SelfAt {
				addrs = append(addrs, a)
			}
			slices.Sort(addrs)
			for _, a := range addrs {
				fmt.Fprintf(bw, "%#x 0 %d\n", a, f.SelfAt[a])
			}
		} else {
			// Own cost at the function's file, then at each other file.
			own := f.Self
			files := make([]string, 0, len(f.Foreign))
			for file, c := range f.Foreign {
				own -= c
				files = append(files, file)
			}
			slices.Sort(files)
			if own != 0 {
				fmt.Fprintf(bw, "%s %d\n", pos, own)
			}
			for _, file := range files {
				fmt.Fprintf(bw, "fi=%s\n%s %d\n", name("f", file), pos, f.Foreign[file])
			}
			if len(files) > 0 {
				fmt.Fprintf(bw, "fe=%s\n", name("f", f.File))
			}
		}
		callees := make([]FuncKey, 0, len(f.Calls))
		for to := range f.Calls {
			callees = append(callees, to)
		}
		sortKeys(callees)
		for _, to := range callees {
			a := f.Calls[to]
			if to.Object != k.Object {
				fmt.Fprintf(bw, "cob=%s\n", name("o", to.Object))
			}
			fmt.Fprintf(bw, "cfn=%s\ncalls=%d %s\n%s %d\n", name("n", to.Name), a.Count, pos, pos, a.Cost)
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintf(bw, "totals: %d\n", p.Totals)
	return bw.Flush()
}

func sortKeys(ks []FuncKey) {
	slices.SortFunc(ks, func(a, b FuncKey) int {
		if c := strings.Compare(a.Object, b.Object); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
