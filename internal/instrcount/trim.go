package main

import (
	"flag"
	"fmt"
	"os"
)

// cmdTrim writes a small copy of a pair of profiles (the test's samples in
// testdata/): per process only the functions whose own cost differs between
// the two runs (or whose calls' does), the callers of the helpers that the
// split charges to their callers, and what the tool's count needs besides (perftest: the
// callers of its loop; a Go program: its monitor thread, as a profile of
// its own with runtime.sysmon alone). The counts and splits per operation of
// the copy are those of the originals.
func cmdTrim(args []string) error {
	fs := flag.NewFlagSet("trim", flag.ExitOnError)
	tool := fs.String("tool", "udapl", "udapl, dapl or perftest")
	dapl := fs.String("dapl", "2.1.10.1.f1e05b7a-3+b1", "dapl2-utils version")
	fs.Parse(args)
	if fs.NArg() != 4 {
		return fmt.Errorf("trim: want IN1 IN2 OUT1 OUT2")
	}
	var ps [2]*Profile
	var monitors [2]*Profile
	for i := range 2 {
		in := fs.Arg(i)
		switch *tool {
		case "udapl":
			r, err := loadRun(*tool, in, *dapl)
			if err != nil {
				return err
			}
			ps[i] = r.Profile
			monitors[i] = &Profile{Cmd: r.Profile.Cmd, Totals: r.MonitorTotals, Funcs: map[FuncKey]*Func{}}
			k := FuncKey{programObject(r.Profile), "runtime.sysmon"}
			monitors[i].Funcs[k] = &Func{Key: k, Self: r.MonitorTotals, Calls: map[FuncKey]*Arc{}}
		default:
			p, err := ReadProfile(in)
			if err != nil {
				return err
			}
			ps[i] = p
		}
	}
	keep := map[FuncKey]bool{}
	for k, f := range ps[0].Funcs {
		if g := ps[1].Funcs[k]; g == nil || g.Self != f.Self || g.Inclusive() != f.Inclusive() {
			keep[k] = true
		}
	}
	for _, p := range ps {
		for k, f := range p.Funcs {
			if ps[0].Funcs[k] == nil || ps[1].Funcs[k] == nil {
				keep[k] = true
			}
			// the split shares a helper's cost out by its callers
			for to := range f.Calls {
				if chargedToCaller[baseName(to.Name)] {
					keep[k] = true
				}
			}
		}
	}
	if *tool == "perftest" {
		for _, p := range ps {
			loop, err := perftestLoop(p)
			if err != nil {
				return err
			}
			keep[loop.Key] = true
			for k, f := range p.Funcs {
				if f.Calls[loop.Key] != nil {
					keep[k] = true
				}
			}
		}
	}
	if *tool == "dapl" {
		b := daplBuilds[*dapl]
		obj := programObject(ps[0])
		keep[FuncKey{obj, b.Exchange}] = true
	}
	for i := range 2 {
		out := fs.Arg(2 + i)
		if *tool == "udapl" {
			if err := writeFile(out+"-01", ps[i], func(f *Func) bool { return keep[f.Key] }); err != nil {
				return err
			}
			if err := writeFile(out+"-02", monitors[i], func(*Func) bool { return true }); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(out, ps[i], func(f *Func) bool { return keep[f.Key] }); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, p *Profile, keep func(*Func) bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteProfile(f, p, keep); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
