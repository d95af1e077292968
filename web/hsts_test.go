package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"groundwork/store"
	"groundwork/web"
)

// TestHSTS: Strict-Transport-Security is sent when the app is reached over
// HTTPS (a TLS listener, or an https:// base URL behind a TLS proxy) and
// never over plain HTTP, where it would lock browsers out of the site.
func TestHSTS(t *testing.T) {
	db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		name, base string
		tls        bool
		want       string
	}{
		{"plain http", "", false, ""},
		{"http base url", "http://gw.example.org", false, ""},
		{"https base url behind a proxy", "https://gw.example.org", false, "max-age=31536000"},
		{"tls listener", "", true, "max-age=31536000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := web.NewHandler(web.Config{
				MaxUploadBytes: 1 << 20,
				UploadDir:      t.TempDir(),
				BaseURL:        tc.base,
				Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
			}, db, web.Importer{DB: db})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewUnstartedServer(h)
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL + "/login")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /login = %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Strict-Transport-Security"); got != tc.want {
				t.Errorf("Strict-Transport-Security = %q, want %q", got, tc.want)
			}
		})
	}
}
