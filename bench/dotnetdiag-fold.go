// SPDX-License-Identifier: MIT
// dotnetdiag-fold.go - the peer driver of bench/bench-dotnetdiag.sh: reads a nettrace file
// with pyroscope dotnetdiag's nettrace package and its SampleProfiler (nettrace/profiler,
// what the pyroscope .NET agent uses) and prints the profile as folded stacks,
// "frame;...;frame NS", sorted, as dotnetdiag's own tests dump it. Our code, using
// dotnetdiag as a library: dotnetdiag itself (github.com/pyroscope-io/dotnetdiag,
// Apache-2.0) is not in this tree; it is fetched and built outside it (the bench script
// builds this file in GOPATH mode against the checkout named by DOTNETDIAG_SRC). The file is
// read through a 1 MiB bufio.Reader (dotnetdiag's tests pass the *os.File itself): fewer
// system calls, so if anything in dotnetdiag's favour.
//
//	dotnetdiag-fold [-managed-only] FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/pyroscope-io/dotnetdiag/nettrace"
	"github.com/pyroscope-io/dotnetdiag/nettrace/profiler"
)

func main() {
	managedOnly := flag.Bool("managed-only", false, "drop External time (profiler.WithManagedCodeOnly)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: dotnetdiag-fold [-managed-only] FILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *managedOnly); err != nil {
		fmt.Fprintln(os.Stderr, "dotnetdiag-fold:", err)
		os.Exit(1)
	}
}

func run(path string, managedOnly bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	stream := nettrace.NewStream(bufio.NewReaderSize(f, 1<<20))
	trace, err := stream.Open()
	if err != nil {
		return err
	}
	var opts []profiler.Option
	if managedOnly {
		opts = append(opts, profiler.WithManagedCodeOnly())
	}
	p := profiler.NewSampleProfiler(trace, opts...)
	stream.EventHandler = p.EventHandler
	stream.MetadataHandler = p.MetadataHandler
	stream.StackBlockHandler = p.StackBlockHandler
	stream.SequencePointBlockHandler = p.SequencePointBlockHandler
	for {
		if err = stream.Next(); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
	}
	samples := p.Samples()
	names := make([]string, 0, len(samples))
	for k := range samples {
		names = append(names, k)
	}
	sort.Strings(names)
	w := bufio.NewWriter(os.Stdout)
	for _, n := range names {
		fmt.Fprintln(w, n, samples[n].Nanoseconds())
	}
	return w.Flush()
}
