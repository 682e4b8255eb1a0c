// gpudash-workload: the one static binary in the real-node tests' images. As /pause (the
// sandbox image) it waits for a signal and reaps children, as the pause container does; as
// /model it plays a model: it allocates and touches memory (--alloc-mib, as a model loading its
// weights into a Jetson's unified memory), answers HTTP (--serve), and exits with --exit-code
// after --exit-after.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func pause() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}

func main() {
	if filepath.Base(os.Args[0]) == "pause" {
		pause()
		return
	}
	alloc := flag.Int("alloc-mib", 0, "MiB to allocate and touch at start")
	serve := flag.String("serve", "", "address to answer HTTP on (e.g. :8000)")
	exitAfter := flag.Duration("exit-after", 0, "exit this long after start (0: never)")
	exitCode := flag.Int("exit-code", 0, "the exit code with --exit-after")
	write := flag.Int("write-mib", 0, "MiB to write at start (ephemeral storage)")
	writeTo := flag.String("write-to", "/tmp/fill", "the file --write-mib writes (an emptyDir's, or the writable layer's)")
	flag.Parse()
	if *write > 0 {
		if f, err := os.Create(*writeTo); err == nil {
			chunk := make([]byte, 1<<20)
			for i := 0; i < *write; i++ {
				_, _ = f.Write(chunk)
			}
			_ = f.Sync()
			_ = f.Close()
			fmt.Printf("model: wrote %d MiB to %s\n", *write, *writeTo)
		}
	}
	var held [][]byte
	for i := 0; i < *alloc; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		held = append(held, b)
	}
	fmt.Printf("model: %d MiB loaded\n", len(held))
	if *serve != "" {
		go func() {
			_ = http.ListenAndServe(*serve, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				fmt.Fprintf(w, "ready: %d MiB\n", len(held))
			}))
		}()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	var after <-chan time.Time
	if *exitAfter > 0 {
		after = time.After(*exitAfter)
	}
	select {
	case <-stop:
	case <-after:
		fmt.Printf("model: exiting with %d\n", *exitCode)
		os.Exit(*exitCode)
	}
}
