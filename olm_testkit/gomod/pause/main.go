// Command pause is the program of the Pod sandbox image: it holds the Pod's namespaces open by
// doing nothing until it is told to stop. As PID 1 of a Pod that shares its PID namespace it is
// the parent of every orphaned process there, so it reaps them lest they stay zombies.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is what `-v` prints; it names this repository's program, not upstream's pause.
const version = "olmpy-pause 1"

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println(version)
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "warning: pause should be the first process")
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		// A stop request is the sandbox's normal end, so it is not a failure.
		fmt.Fprintf(os.Stderr, "shutting down, got signal: %v\n", sig)
		os.Exit(0)
	}
}

// reap collects every exited child: signals coalesce, so one SIGCHLD may stand for several exits.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
