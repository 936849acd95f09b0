package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// A Run is one measured process of one run: its count and, for udapl, the
// profile the split comes from.
type Run struct {
	Count   int64
	Profile *Profile // udapl: without the monitor thread; c: the process
	Loop    string   // perftest: the measurement loop's function
	Posts   int64    // dapl: the posts of the throughput loop
	// MonitorTotals: udapl, the monitor thread's instructions (left out)
	MonitorTotals int64
}

// loadRun reads the profile(s) at path (a Go program's: path-NN, one per
// thread) and counts them as tool's.
func loadRun(tool, path, daplVersion string) (*Run, error) {
	switch tool {
	case "udapl":
		files, _ := filepath.Glob(path + "-[0-9]*")
		sort.Strings(files)
		if len(files) == 0 {
			// One file for all threads: the monitor's inclusive cost
			// comes off the total.
			p, err := ReadProfile(path)
			if err != nil {
				return nil, err
			}
			var mon int64
			for k, f := range p.Funcs {
				if k.Name == "runtime.sysmon" {
					mon += f.Inclusive()
				}
			}
			if mon == 0 {
				return nil, fmt.Errorf("%s: no runtime.sysmon: not a Go program?", path)
			}
			chargeLines(p)
			return &Run{Count: p.Totals - mon, Profile: p, MonitorTotals: mon}, nil
		}
		var threads []*Profile
		for _, f := range files {
			p, err := ReadProfile(f)
			if err != nil {
				return nil, err
			}
			threads = append(threads, p)
		}
		c, mon, merged, err := goCount(threads)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		chargeLines(merged)
		return &Run{Count: c, Profile: merged, MonitorTotals: mon}, nil
	case "c":
		// A C program's whole process, every thread in the one file.
		p, err := ReadProfile(path)
		if err != nil {
			return nil, err
		}
		return &Run{Count: p.Totals, Profile: p}, nil
	case "perftest":
		p, err := ReadProfile(path)
		if err != nil {
			return nil, err
		}
		f, err := perftestLoop(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Run{Count: f.Inclusive(), Loop: f.Key.Name}, nil
	case "dapl":
		p, err := ReadProfile(path)
		if err != nil {
			return nil, err
		}
		c, posts, err := daplCount(p, daplVersion)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Run{Count: c, Posts: posts}, nil
	}
	return nil, fmt.Errorf("unknown tool %q (udapl, dapl, perftest or c)", tool)
}

// exists: a profile (or a Go program's first thread's) is there.
func exists(path string) bool {
	if _, err := os.Stat(path); err == nil {
		return true
	}
	files, _ := filepath.Glob(path + "-[0-9]*")
	return len(files) > 0
}

// perOp is (c2 - c1) / (n2 - n1).
func perOp(c1, c2, n1, n2 int64) float64 {
	return float64(c2-c1) / float64(n2-n1)
}

// funcDeltas: each function's own cost per operation between two profiles
// (by name and object; recursion levels together), largest first.
type funcDelta struct {
	Key   FuncKey
	File  string
	Cat   string
	PerOp float64
}

func funcDeltas(p1, p2 *Profile, n1, n2 int64) []funcDelta {
	prog := programObject(p2)
	type acc struct {
		c1, c2 int64
		file   string
		cat    string
	}
	m := map[FuncKey]*acc{}
	add := func(p *Profile, second bool) {
		for k, f := range p.Funcs {
			bk := FuncKey{k.Object, baseName(k.Name)}
			a := m[bk]
			if a == nil {
				a = &acc{file: f.File, cat: category(f, prog)}
				m[bk] = a
			}
			if second {
				a.c2 += f.Self
			} else {
				a.c1 += f.Self
			}
		}
	}
	add(p1, false)
	add(p2, true)
	var out []funcDelta
	for k, a := range m {
		if a.c1 == a.c2 {
			continue
		}
		out = append(out, funcDelta{k, a.file, a.cat, perOp(a.c1, a.c2, n1, n2)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PerOp != out[j].PerOp {
			return out[i].PerOp > out[j].PerOp
		}
		return out[i].Key.Name < out[j].Key.Name
	})
	return out
}
