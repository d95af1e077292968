package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// TestCrashChild is not a test: TestCrashDuringImport runs the test binary
// again with GW_CRASH_CHILD set, and this function then behaves as the
// groundwork command with the arguments in GW_CRASH_ARGS.
func TestCrashChild(t *testing.T) {
	if os.Getenv("GW_CRASH_CHILD") != "1" {
		t.Skip("helper process for TestCrashDuringImport")
	}
	args := append([]string{"groundwork"}, strings.Split(os.Getenv("GW_CRASH_ARGS"), "\x1f")...)
	err := web.Run(context.Background(), args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func groundworkProcess(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), "GW_CRASH_CHILD=1", "GW_CRASH_ARGS="+strings.Join(args, "\x1f"))
	return cmd
}

// TestCrashDuringImport kills groundwork (SIGKILL) in the middle of a large
// import, then checks that nothing of the file landed, that the database
// passes its integrity check, and that the same import then succeeds.
func TestCrashDuringImport(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a large generated pool")
	}
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool.jsonl")
	f, err := os.Create(pool)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	const n = 6000
	for tr := range grounding.Generate(grounding.GenOptions{Trajectories: n, Seed: 5, Kind: "mixed"}) {
		enc.Encode(tr)
	}
	w.Flush()
	f.Close()
	dsn := "sqlite://" + filepath.Join(dir, "groundwork.db")

	// A first, small import, so "unchanged" is about a database with data.
	if out, err := groundworkProcess(t, "import", "--db", dsn, "--run", "before", filepath.Join("..", "grounding", "testdata", "import", "canonical.jsonl")).CombinedOutput(); err != nil {
		t.Fatalf("first import: %v\n%s", err, out)
	}

	cmd := groundworkProcess(t, "import", "--db", dsn, "--run", "crashed", pool)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once the import has been writing for a while: the write-ahead
	// log grows while the transaction is open.
	wal := filepath.Join(dir, "groundwork.db-wal")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, err := os.Stat(wal); err == nil && st.Size() > 4<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the import never got going")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the import finished before it was killed (%v): make the pool larger", err)
	}

	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	if _, err := db.RunByName(ctx, "crashed"); err == nil {
		t.Error("the killed import left its run behind")
	}
	runs, err := db.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].Name != "before" || runs[0].Imports != 1 {
		t.Errorf("runs after the crash = %+v, %v; want only the earlier one", runs, err)
	}
	db.Close()
	if out, err := groundworkProcess(t, "import", "--db", dsn, "--run", "crashed", pool).CombinedOutput(); err != nil || !strings.Contains(string(out), "imported 6000 trajectories") {
		t.Fatalf("re-running the import after the crash = %v\n%s", err, out)
	}
	db, err = store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if r, err := db.RunByName(ctx, "crashed"); err != nil || r.Trajectories != n {
		t.Errorf("after the re-run, run = %+v, %v; want %d trajectories", r, err, n)
	}
}
