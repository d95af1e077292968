package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"groundwork/grounding"
)

// TestOpenErrorHidesPassword opens databases that cannot be reached or
// parsed and checks that no error message, nor any error it unwraps to,
// shows the password written in the dsn.
func TestOpenErrorHidesPassword(t *testing.T) {
	bad := filepath.Join("/proc", "no-such-dir") // MkdirAll fails here: nothing is created
	for _, tc := range []struct {
		name, dsn string
		secrets   []string
		named     bool // the error quotes the dsn, with the password hidden
	}{
		// Port 1: nothing listens, the dial is refused at once.
		{"url refused", "postgres://bob:S3cret-pw@127.0.0.1:1/groundwork?sslmode=disable&connect_timeout=2", []string{"S3cret-pw"}, false},
		{"url escaped", "postgres://bob:S3c%40ret@127.0.0.1:1/groundwork?sslmode=disable", []string{"S3c%40ret", "S3c@ret"}, false},
		{"url unparsable", "postgresql://bob:S3cret-pw@[::1/groundwork", []string{"S3cret-pw"}, true},
		{"url query password", "postgres://bob@127.0.0.1:1/groundwork?sslmode=disable&password=S3cret-pw", []string{"S3cret-pw"}, false},
		{"key=value", "sqlite://" + bad + "/host=db user=bob password=S3cret-pw dbname=g", []string{"S3cret-pw"}, true},
		{"key=value quoted", "sqlite://" + bad + "/host=db password='S3 cret' dbname=g", []string{"S3 cret"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			db, err := Open(ctx, tc.dsn)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded", tc.dsn)
			}
			msgs := []string{err.Error()}
			var walk func(error)
			walk = func(e error) {
				switch u := e.(type) {
				case interface{ Unwrap() error }:
					if w := u.Unwrap(); w != nil {
						msgs = append(msgs, w.Error())
						walk(w)
					}
				case interface{ Unwrap() []error }:
					for _, w := range u.Unwrap() {
						msgs = append(msgs, w.Error())
						walk(w)
					}
				}
			}
			walk(err)
			for _, m := range msgs {
				for _, s := range tc.secrets {
					if strings.Contains(m, s) {
						t.Errorf("error shows the password %q: %s", s, m)
					}
				}
			}
			if tc.named && !strings.Contains(err.Error(), redacted) {
				t.Errorf("error %q does not say a password was hidden", err)
			}
			t.Log(err)
		})
	}
	// Errors the store classifies keep their class after redaction.
	if _, err := Open(context.Background(), ""); !errors.Is(err, grounding.ErrInvalid) {
		t.Errorf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

func TestRedactKeepsErrorsIs(t *testing.T) {
	dsn := "postgres://bob:S3cret@h/x"
	err := redactErr(errors.Join(context.DeadlineExceeded, errors.New("connect "+dsn)), dsn)
	if strings.Contains(err.Error(), "S3cret") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("redactErr = %v (Is deadline: %v)", err, errors.Is(err, context.DeadlineExceeded))
	}
}
