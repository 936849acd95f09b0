package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progress draws a live progress line on stderr during long runs: it
// appears after the first second and is erased when the run ends.
type progress struct {
	w     io.Writer
	label string
	total int64
	size  int
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	drawn bool
}

// progressDelay is how long a run goes before the line appears.
const progressDelay = time.Second

// wantProgress reports whether the progress line is on: asked for, or
// stderr is a terminal (and TERM is not "dumb").
func wantProgress(mode string) bool {
	switch mode {
	case "on":
		return true
	case "off":
		return false
	}
	return isTerminal(os.Stderr) && os.Getenv("TERM") != "dumb"
}

// startProgress starts the line for a run of total operations of size
// bytes; it returns nil (whose methods do nothing) when the line is off.
func startProgress(on bool, w io.Writer, label string, total int64, size int) *progress {
	if !on {
		return nil
	}
	p := &progress{w: w, label: label, total: total, size: size, start: time.Now(), stop: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

// set records that n operations are done.
func (p *progress) set(n int64) {
	if p != nil {
		p.done.Store(n)
	}
}

func (p *progress) add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

func (p *progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			if p.drawn {
				fmt.Fprintf(p.w, "\r%-100s\r", "")
			}
			return
		case now := <-t.C:
			el := now.Sub(p.start)
			if el < progressDelay {
				continue
			}
			p.drawn = true
			fmt.Fprintf(p.w, "\r%-100s", p.line(p.done.Load(), el))
		}
	}
}

// line formats the progress line.
func (p *progress) line(done int64, el time.Duration) string {
	rate := float64(done) / el.Seconds()
	s := fmt.Sprintf("%s: %d/%d ops (%3.0f%%)  %.1f kops/s", p.label, done, p.total,
		100*float64(done)/float64(max(p.total, 1)), rate/1e3)
	if p.size > 0 {
		s += fmt.Sprintf("  %.2f MB/s", rate*float64(p.size)/(1<<20))
	}
	if rate > 0 && done < p.total {
		eta := time.Duration(float64(p.total-done) / rate * float64(time.Second))
		s += fmt.Sprintf("  eta %s", eta.Round(time.Second))
	}
	return s
}

// finish erases the line.
func (p *progress) finish() {
	if p == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
}
