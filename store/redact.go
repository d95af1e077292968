package store

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces a password in an error message.
const redacted = "xxxxx"

// dsnSecrets finds passwords in text: the user-info of a URL
// (postgres://user:PASSWORD@host) and key=value settings (password=PASSWORD,
// quoted or not, in a key=value DSN or a URL's query).
var dsnSecrets = regexp.MustCompile(`(://[^:/?#@\s"]*:)[^@\s"]*@|((?i:password|passwd|pwd)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&"']+)`)

// redactDSN hides the passwords of dsn in msg: every occurrence of the
// password the dsn holds (as written, and URL-decoded), then anything shaped
// like a password in a connection string.
func redactDSN(msg, dsn string) string {
	for _, pw := range dsnPasswords(dsn) {
		if len(pw) > 0 {
			msg = strings.ReplaceAll(msg, pw, redacted)
		}
	}
	return dsnSecrets.ReplaceAllStringFunc(msg, func(m string) string {
		sub := dsnSecrets.FindStringSubmatch(m)
		if sub[1] != "" {
			return sub[1] + redacted + "@"
		}
		return sub[2] + redacted
	})
}

// dsnPasswords returns the passwords written in dsn, in the forms they may
// take in an error message.
func dsnPasswords(dsn string) []string {
	var pws []string
	add := func(raw string) {
		pws = append(pws, raw)
		if dec, err := url.PathUnescape(raw); err == nil && dec != raw {
			pws = append(pws, dec)
		}
	}
	// URL user-info, also when url.Parse would refuse the rest.
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if c := strings.IndexByte(rest[:at], ':'); c >= 0 {
				add(rest[c+1 : at])
			}
		}
	}
	for _, sub := range dsnSecrets.FindAllStringSubmatch(dsn, -1) {
		if sub[3] != "" {
			v := sub[3]
			add(v)
			if len(v) >= 2 && v[0] == '\'' {
				add(v[1 : len(v)-1])
			}
		}
	}
	return pws
}

// redactedError is an error whose message hides a dsn's password. It
// unwraps to the parts of the error it replaces whose messages hold no
// password (ErrInvalid, a context error, a *pq.Error), so errors.Is and
// errors.As still see them, and no unwrapping reaches the password.
type redactedError struct {
	msg   string
	clean []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.clean }

// redactErr returns err with dsn's passwords hidden from its message.
func redactErr(err error, dsn string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	r := redactDSN(msg, dsn)
	if r == msg {
		return err
	}
	return &redactedError{msg: r, clean: cleanParts(err, dsn, nil)}
}

// cleanParts appends the outermost errors in err's tree whose messages
// redactDSN leaves as they are.
func cleanParts(err error, dsn string, out []error) []error {
	if err == nil {
		return out
	}
	if m := err.Error(); redactDSN(m, dsn) == m {
		return append(out, err)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = cleanParts(u.Unwrap(), dsn, out)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = cleanParts(e, dsn, out)
		}
	}
	return out
}
