package web

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"

	"groundwork/grounding"
	"groundwork/handlers"
	"groundwork/store"
	"groundwork/web/demo"
)

const usage = `groundwork: grounding review of tool-use agent logs

usage:
  groundwork serve   [--addr :8080] [--base-url URL] [--proxy-hops N] [--db URL] [--data DIR] [--no-demo] [--max-upload BYTES] [--lease 15m]
  groundwork migrate [--db URL]
  groundwork import  [--db URL] [--run NAME] [--format auto|canonical|tau-bench|openai-jsonl] FILE...
  groundwork user add NAME --role admin|researcher|annotator [--db URL]
  groundwork user passwd|disable|enable NAME [--db URL]
  groundwork export  --run NAME --format masks|sft|csv [--view V] [--scale S] [--domain D] [--source auto|human|any] [--complete=false] [--include-empty] [--ids] [--limit N] > FILE
  groundwork token   create|list|revoke --user NAME [--name LABEL] [ID]
  groundwork swe     [--instances FILE] [--results FILE] [--json] FILE...   SWE diagnostics, no database

The database is --db, else $DATABASE_URL, else the SQLite file DIR/groundwork.db
(DIR is --data, else $GROUNDWORK_DATA, else ./data). URLs: postgres://… or sqlite://PATH.
`

// Env is how Run reads the environment (os.Getenv in main, a map in tests).
type Env func(string) string

// Run is groundwork's entry point: it parses args (args[0] is the program
// name), runs the chosen command and returns when it is done or ctx ends.
func Run(ctx context.Context, args []string, getenv Env, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[1], args[2:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout)
	case "import":
		defer batchGC(getenv)()
		return runImport(ctx, rest, getenv, stdout, stderr)
	case "user":
		return runUser(ctx, rest, getenv, stdin, stdout, stderr)
	case "recheck":
		defer batchGC(getenv)()
		return runRecheck(ctx, rest, getenv, stdout)
	case "check":
		defer batchGC(getenv)()
		return runCheck(ctx, rest, stdout, stderr)
	case "gen":
		return runGen(rest, stdout)
	case "swe":
		return runSWE(ctx, rest, stdout, stderr)
	case "export":
		return runExport(ctx, rest, getenv, stdout, stderr)
	case "token":
		return runToken(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// dbFlags are the flags every database command shares.
type dbFlags struct {
	db   string
	data string
}

func (f *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.db, "db", "", "database URL: postgres://… or sqlite://PATH (default $DATABASE_URL, else DATA/groundwork.db)")
	fs.StringVar(&f.data, "data", "", "data directory for the embedded SQLite database and uploads (default $GROUNDWORK_DATA, else ./data)")
}

func (f *dbFlags) dataDir(getenv Env) string {
	if f.data != "" {
		return f.data
	}
	if d := getenv("GROUNDWORK_DATA"); d != "" {
		return d
	}
	return "data"
}

func (f *dbFlags) dsn(getenv Env) string {
	if f.db != "" {
		return f.db
	}
	if u := getenv("DATABASE_URL"); u != "" {
		return u
	}
	return "sqlite://" + filepath.Join(f.dataDir(getenv), "groundwork.db")
}

func (f *dbFlags) open(ctx context.Context, getenv Env) (*store.DB, error) {
	db, err := store.Open(ctx, f.dsn(getenv))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return db, nil
}

// parse parses fs allowing flags after positional arguments
// (`groundwork import a.json --run x`), which the flag package alone stops at.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runMigrate(ctx context.Context, args []string, getenv Env, stdout io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var dbf dbFlags
	dbf.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	db, err := dbf.open(ctx, getenv) // Open applies pending migrations
	if err != nil {
		return err
	}
	defer db.Close()
	v, err := db.Version(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database (%s) is at migration version %d\n", db.Dialect(), v)
	return nil
}

func runImport(ctx context.Context, args []string, getenv Env, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var dbf dbFlags
	dbf.register(fs)
	run := fs.String("run", "", "run to import into (default: each file's base name)")
	format := fs.String("format", "auto", "input format: auto, canonical, tau-bench, openai-jsonl")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("import: name at least one FILE")
	}
	if *run != "" {
		if p := grounding.RunNameProblem(*run); p != "" {
			return fmt.Errorf("import: --run %q: %s Nothing was imported.", *run, p)
		}
	}
	f, err := grounding.ParseFormat(*format)
	if err != nil {
		return err
	}
	db, err := dbf.open(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	imp := Importer{DB: db}
	failed := 0
	for _, file := range files {
		start := time.Now()
		res, err := imp.ImportFile(ctx, *run, file, file, f)
		if err != nil {
			failed++
			var ie *grounding.ImportError
			if errors.As(err, &ie) { // it names the file already
				fmt.Fprintf(stderr, "refused, nothing imported: %v\n", err)
			} else {
				fmt.Fprintf(stderr, "%s: refused, nothing imported: %v\n", file, err)
			}
			continue
		}
		if res.Duplicate {
			fmt.Fprintf(stdout, "%s: already imported into run %q on %s; nothing added\n", file, res.PreviousRun, res.PreviousAt.Format(time.DateTime))
			continue
		}
		if msg, ok := sweDataSummary(res); ok {
			fmt.Fprintf(stdout, "%s: %s\n", file, msg)
			continue
		}
		secs := time.Since(start).Seconds()
		fmt.Fprintf(stdout, "%s: imported %d trajectories, %d messages, %d decisions into run %q as %s (%.1f MB/s, %.0f trajectories/s)\n",
			file, res.Trajectories, res.Messages, res.Decisions, res.RunName, res.Format,
			float64(res.Bytes)/1e6/secs, float64(res.Trajectories)/secs)
	}
	if failed > 0 {
		return fmt.Errorf("import: %d of %d files refused", failed, len(files))
	}
	return nil
}

// runRecheck re-runs the grounding checks on stored trajectories after an
// engine or profile change, keeping human verdicts.
func runRecheck(ctx context.Context, args []string, getenv Env, stdout io.Writer) error {
	fs := flag.NewFlagSet("recheck", flag.ContinueOnError)
	var dbf dbFlags
	dbf.register(fs)
	run := fs.String("run", "", "recheck only this run (default: every run)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	db, err := dbf.open(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	var runID int64
	if *run != "" {
		r, err := db.RunByName(ctx, *run)
		if errors.Is(err, grounding.ErrNotFound) {
			return fmt.Errorf("recheck: there is no run named %q", *run)
		}
		if err != nil {
			return err
		}
		runID = r.ID
	}
	start := time.Now()
	// On a terminal the progress line rewrites itself; in a log file or a
	// pipe, a carriage return would run the counts together on one line.
	f, tty := stdout.(*os.File)
	tty = tty && term.IsTerminal(int(f.Fd()))
	res, err := db.Recheck(ctx, runID, grounding.CheckDefault, func(p store.RecheckResult) {
		if tty {
			fmt.Fprintf(stdout, "\r%d trajectories rechecked", p.Trajectories)
		} else {
			fmt.Fprintf(stdout, "%d trajectories rechecked\n", p.Trajectories)
		}
	})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	if tty {
		fmt.Fprint(stdout, "\r")
	}
	fmt.Fprintf(stdout, "rechecked %d trajectories, %d decisions in %.1f s (%.0f decisions/s); %d automatic verdicts changed; human verdicts kept\n",
		res.Trajectories, res.Decisions, secs, float64(res.Decisions)/secs, res.Changed)
	return nil
}

const userUsage = `usage:
  groundwork user add NAME --role admin|researcher|annotator   (password from stdin or a prompt)
  groundwork user passwd NAME     set a new password (stdin or a prompt); ends NAME's sessions
  groundwork user disable NAME    no more logins; ends NAME's sessions and revokes their API tokens
  groundwork user enable NAME     allow NAME to log in again`

func runUser(ctx context.Context, args []string, getenv Env, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(userUsage)
	}
	verb := args[0]
	switch verb {
	case "add", "passwd", "disable", "enable":
	default:
		return errors.New(userUsage)
	}
	fs := flag.NewFlagSet("user "+verb, flag.ContinueOnError)
	var dbf dbFlags
	dbf.register(fs)
	var role *string
	if verb == "add" {
		role = fs.String("role", grounding.RoleAnnotator, "admin, researcher or annotator")
	}
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(userUsage)
	}
	name := pos[0]
	if role != nil && !grounding.ValidAccountRole(*role) {
		return fmt.Errorf("user add: role %q: expected admin, researcher or annotator", *role)
	}
	var hash []byte
	if verb == "add" || verb == "passwd" {
		password, err := readPassword(stdin, stderr)
		if err != nil {
			return err
		}
		if p := handlers.PasswordProblem(string(password)); p != "" {
			return fmt.Errorf("user %s: %s", verb, strings.ToLower(p[:1])+p[1:])
		}
		if hash, err = bcrypt.GenerateFromPassword(password, bcrypt.DefaultCost); err != nil {
			return fmt.Errorf("user %s: hash password: %w", verb, err)
		}
	}
	db, err := dbf.open(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	if verb == "add" {
		u, err := db.CreateUser(ctx, name, *role, hash)
		if errors.Is(err, grounding.ErrConflict) {
			return fmt.Errorf("user add: a user named %q already exists", name)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created %s %q\n", u.Role, u.Name)
		return nil
	}
	u, err := db.UserByName(ctx, name)
	if errors.Is(err, grounding.ErrNotFound) {
		return fmt.Errorf("user %s: no user named %q", verb, name)
	}
	if err != nil {
		return err
	}
	switch verb {
	case "passwd":
		err = db.SetPassword(ctx, u.ID, hash)
	default:
		err = db.SetDisabled(ctx, u.ID, verb == "disable")
	}
	if errors.Is(err, grounding.ErrInvalid) {
		return fmt.Errorf("user %s: %q is the last enabled admin; enable or add another admin first", verb, name)
	}
	if err != nil {
		return err
	}
	switch verb {
	case "passwd":
		fmt.Fprintf(stdout, "new password set for %q; their sessions were ended\n", name)
	case "disable":
		fmt.Fprintf(stdout, "disabled %q: sessions ended, API tokens revoked, no new login\n", name)
	default:
		fmt.Fprintf(stdout, "enabled %q: they can log in again (revoked API tokens stay revoked)\n", name)
	}
	return nil
}

// readPassword prompts on a terminal without echo; otherwise it reads the
// first line of stdin, so scripts can pipe a password in.
func readPassword(stdin io.Reader, stderr io.Writer) ([]byte, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "password: ")
		p, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return nil, fmt.Errorf("read password: %w", err)
		}
		return p, nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 4096))
	if err != nil {
		return nil, fmt.Errorf("read password from stdin: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return bytes.TrimRight(line, "\r"), nil
}

func runServe(ctx context.Context, args []string, getenv Env, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var dbf dbFlags
	dbf.register(fs)
	addr := fs.String("addr", "", "listen address (default :$PORT, else localhost:8080)")
	noDemo := fs.Bool("no-demo", false, "do not load the demo pool into an empty database")
	maxUpload := fs.Int64("max-upload", 1<<30, "largest accepted upload in bytes")
	lease := fs.Duration("lease", store.DefaultLease, "how long an annotator's claim on a queue item lasts without activity")
	debugAddr := fs.String("debug-addr", "", "serve Go's profiler (net/http/pprof) on this separate address, e.g. localhost:6060; off by default")
	baseFlag := fs.String("base-url", "", "the address people reach the app at, e.g. https://gw.example.org behind a TLS proxy (default $GROUNDWORK_BASE_URL): https marks the session cookie Secure")
	hops := fs.Int("proxy-hops", 0, "how many reverse proxies stand in front of the app, each appending to X-Forwarded-For (default $GROUNDWORK_PROXY_HOPS, else 0: the header is not trusted)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	hopsSet := false
	fs.Visit(func(f *flag.Flag) { hopsSet = hopsSet || f.Name == "proxy-hops" })
	if !hopsSet {
		if v := getenv("GROUNDWORK_PROXY_HOPS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 16 {
				return fmt.Errorf("serve: $GROUNDWORK_PROXY_HOPS %q: expected a number of proxies from 0 to 16", v)
			}
			*hops = n
		}
	}
	if *hops < 0 || *hops > 16 {
		return fmt.Errorf("serve: --proxy-hops %d: expected a number of proxies from 0 to 16", *hops)
	}
	if *baseFlag == "" {
		*baseFlag = getenv("GROUNDWORK_BASE_URL")
	}
	if *baseFlag != "" {
		u, err := url.Parse(*baseFlag)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("serve: --base-url %q: expected http://HOST or https://HOST", *baseFlag)
		}
	}
	if *addr == "" {
		*addr = "localhost:8080"
		if p := getenv("PORT"); p != "" {
			*addr = ":" + p
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	dataDir := dbf.dataDir(getenv)
	db, err := dbf.open(ctx, getenv)
	if err != nil {
		return err
	}
	defer db.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", *addr, err)
	}
	base := baseURL(ln.Addr(), *addr)
	if err := firstRun(ctx, db, !*noDemo, base, stdout); err != nil {
		ln.Close()
		return err
	}

	uploadDir := filepath.Join(dataDir, "uploads")
	if err := os.MkdirAll(uploadDir, 0o700); err != nil {
		ln.Close()
		return fmt.Errorf("serve: create upload dir: %w", err)
	}
	h, err := NewHandler(Config{
		MaxUploadBytes: *maxUpload,
		ClaimLease:     *lease,
		UploadDir:      uploadDir,
		BaseURL:        *baseFlag,
		ProxyHops:      *hops,
		Logger:         logger,
	}, db, Importer{DB: db})
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go sweepSessions(ctx, db, logger)
	if *debugAddr != "" {
		stop, err := serveDebug(*debugAddr, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
	}
	fmt.Fprintf(stdout, "groundwork serving on %s (%s database)\n", base, db.Dialect())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// baseURL is the address to print for humans: a wildcard host becomes localhost.
func baseURL(a net.Addr, requested string) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + requested
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) || (ip != nil && ip.IsLoopback()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// firstRun prepares an empty database: it creates an admin account with a
// random password, printed once, and loads the demo pool.
func firstRun(ctx context.Context, db *store.DB, loadDemo bool, base string, stdout io.Writer) error {
	n, err := db.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	password := handlers.NewPassword()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	if _, err := db.CreateUser(ctx, "admin", grounding.RoleAdmin, hash); err != nil {
		return fmt.Errorf("first run: create admin: %w", err)
	}
	fmt.Fprintf(stdout, `
  groundwork: first start, created the account "admin".
    log in at  %s/login
    user       admin
    password   %s
  This password is shown once. Add people with: groundwork user add NAME --role annotator

`, base, password)
	if !loadDemo {
		return nil
	}
	runs, err := db.Runs(ctx)
	if err != nil || len(runs) > 0 {
		return err
	}
	return importDemo(ctx, db, stdout)
}

// importDemo imports the demo: the SWE instances with two agents' runs on
// them, the hand-written τ-bench-style pool, and a generated one large
// enough for the coverage page and the review queue. The generated pool
// goes last, so it is the run pages open on by default.
func importDemo(ctx context.Context, db *store.DB, stdout io.Writer) error {
	var swe []string
	for _, f := range demo.SWEFiles() {
		res, err := ImportBytes(ctx, db, f.Run, f.Name, f.Data)
		if err != nil {
			return fmt.Errorf("first run: load the SWE demo: %w", err)
		}
		if res.Trajectories > 0 {
			swe = append(swe, strconv.Quote(res.RunName))
		}
	}
	res, err := ImportBytes(ctx, db, demo.RunName, demo.FileName, demo.JSONL)
	if err != nil {
		return fmt.Errorf("first run: load demo pool: %w", err)
	}
	fmt.Fprintf(stdout, "  loaded the demo pool: %d trajectories into run %q\n", res.Trajectories, res.RunName)
	res, err = ImportBytes(ctx, db, demo.GeneratedRun, demo.GeneratedFile, demo.Generated())
	if err != nil {
		return fmt.Errorf("first run: load the generated demo pool: %w", err)
	}
	fmt.Fprintf(stdout, "  loaded %d generated trajectories into run %q (groundwork gen --kind tau --seed %d)\n", res.Trajectories, res.RunName, demo.GeneratedSeed)
	fmt.Fprintf(stdout, "  loaded the SWE demo: runs %s on %d instances\n\n", strings.Join(swe, " and "), demo.SWEInstances)
	return nil
}

// ImportBytes imports an in-memory file (the demo pool, tests).
func ImportBytes(ctx context.Context, db *store.DB, runName, fileName string, data []byte) (grounding.ImportResult, error) {
	return Importer{DB: db}.importReader(ctx, runName, bytes.NewReader(data), fileName, grounding.FormatAuto)
}

// sweepSessions deletes expired sessions hourly so the table does not grow.
func sweepSessions(ctx context.Context, db *store.DB, logger *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := db.DeleteExpiredSessions(ctx); err != nil {
				logger.Warn("sweep sessions", "err", err)
			} else if n > 0 {
				logger.Info("swept expired sessions", "count", strconv.FormatInt(n, 10))
			}
			// Expired claims never count; deleting them only keeps the table small.
			if _, err := db.ReleaseExpired(ctx); err != nil {
				logger.Warn("release expired claims", "err", err)
			}
		}
	}
}
